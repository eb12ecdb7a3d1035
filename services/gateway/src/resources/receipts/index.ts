// Signed receipts: GET /v1/receipts, GET /v1/submissions/{submissionId}/receipts, and the public
// GET /.well-known/receipt-keys.json (answered before authentication).
import type { Resource } from '../resource.js';
import { receiptPaths, receiptSchemas } from './openapi.js';
import { receiptKeysRoute, receiptRoutes } from './routes.js';

export const receipts: Resource = {
  name: 'receipts', routes: receiptRoutes,
  publicRoute: (deps) => receiptKeysRoute(deps.clients, deps.config.grpcTimeoutMs),
  openapi: {
    tag: { name: 'Receipts', description: 'Signed receipts: offline proof of what was received, and when, chained per partner.' },
    paths: receiptPaths, schemas: receiptSchemas,
  },
};
