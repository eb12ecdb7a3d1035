// GET /v1/health: who the credentials belong to.
import type { Resource } from '../resource.js';
import { healthPaths, healthSchemas } from './openapi.js';
import { healthRoutes } from './routes.js';

export const health: Resource = {
  name: 'health', routes: healthRoutes,
  openapi: { tag: { name: 'Health', description: 'Who the credentials belong to.' }, paths: healthPaths, schemas: healthSchemas },
};
