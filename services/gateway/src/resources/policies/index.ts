// The partner's policies, read only: GET /v1/policies and GET /v1/policies/{policyId}.
import type { Resource } from '../resource.js';
import { policyPaths, policySchemas } from './openapi.js';
import { policyRoutes } from './routes.js';

export const policies: Resource = {
  name: 'policies', routes: policyRoutes,
  openapi: { tag: { name: 'Policies', description: "The partner's policies (read only)." }, paths: policyPaths, schemas: policySchemas },
};
