// Clearance and withdrawal (docs/api.md "Clearance"): the clearance and withdrawal objects every
// submission shows, and POST /v1/submissions/{submissionId}/withdraw (a job).
import { ref } from '../../openapi/schemas.js';
import type { Resource } from '../resource.js';
import { clearancePaths, clearanceSchemas } from './openapi.js';
import { withdrawRoutes } from './routes.js';

export const clearance: Resource = {
  name: 'clearance', routes: withdrawRoutes,
  openapi: {
    paths: clearancePaths, schemas: clearanceSchemas,
    jobResults: [ref('Submission')],
    eventData: { 'submission.withdrawn': ref('Submission') },
  },
};
