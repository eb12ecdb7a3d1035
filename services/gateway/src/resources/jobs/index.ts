// The asynchronous jobs that carry out every mutation: GET /v1/jobs (the list), GET /v1/jobs/{jobId}
// (under Prefer: wait, held until it settles) and POST /v1/jobs/{jobId}/cancel. The machinery every
// mutation route shares (queueing, Prefer: wait, the answers) is in src/jobs/.
import { ref } from '../../openapi/schemas.js';
import type { Resource } from '../resource.js';
import { jobPaths, jobSchemas } from './openapi.js';
import { jobRoutes } from './routes.js';

export const jobs: Resource = {
  name: 'jobs', routes: jobRoutes,
  openapi: {
    tag: { name: 'Jobs', description: 'The asynchronous jobs that carry out every mutation.' },
    paths: jobPaths, schemas: ({ jobResults }) => jobSchemas(jobResults),
    eventData: { 'job.succeeded': ref('JobSucceeded'), 'job.failed': ref('JobFailed'), 'job.canceled': ref('JobCanceled') },
  },
};
