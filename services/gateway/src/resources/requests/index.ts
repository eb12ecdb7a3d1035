// The partner's request log (docs/api.md "Request log"): GET /v1/requests and GET /v1/requests/{id},
// read from the events service, which stores what the gateways record (src/request-log/).
import type { Resource } from '../resource.js';
import { requestPaths, requestSchemas } from './openapi.js';
import { requestRoutes } from './routes.js';

export const requests: Resource = {
  name: 'requests', routes: requestRoutes,
  openapi: {
    tag: { name: 'Requests', description: "The partner's request log: what its integration sent, what came back, and whether it was a replay." },
    paths: requestPaths, schemas: requestSchemas,
  },
};
