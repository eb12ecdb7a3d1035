// The product catalogue and each product's requirements: GET /v1/products, /v1/products/{productId}
// and /v1/products/{productId}/requirements.
import { ref } from '../../openapi/schemas.js';
import type { Resource } from '../resource.js';
import { productPaths, productSchemas } from './openapi.js';
import { productRoutes } from './routes.js';

export const products: Resource = {
  name: 'products', routes: productRoutes,
  openapi: {
    tag: { name: 'Products', description: 'The product catalogue and what each product requires of a submission (machine-readable).' },
    paths: productPaths, schemas: productSchemas,
    eventData: { 'product.requirements_changed': ref('Product') },
  },
};
