// The bind (docs/api.md "Quotes…", bind): POST /v1/quotes/{quoteId}/bind, a job whose result is the
// policy issued. Its own resource (not the quotes folder): the quote resource creates and reads
// quotes, this one turns one into a policy.
import { ref } from '../../openapi/schemas.js';
import type { Resource } from '../resource.js';
import { bindPaths, bindSchemas } from './openapi.js';
import { bindRoutes } from './routes.js';

export const bind: Resource = {
  name: 'bind',
  routes: bindRoutes,
  openapi: {
    paths: bindPaths,
    schemas: bindSchemas,
    jobResults: [ref('Policy')],
    eventData: { 'policy.issued': ref('Policy'), 'policy.updated': ref('Policy'), 'submission.updated': ref('Submission') },
  },
};
