// New-business submissions: POST /v1/submissions (a job), GET /v1/submissions (the list),
// GET /v1/submissions/{submissionId}, and POST /v1/submissions/validate (a dry run of a create).
import { ref } from '../../openapi/schemas.js';
import type { Resource } from '../resource.js';
import { submissionPaths, submissionSchemas } from './openapi.js';
import { submissionRoutes } from './routes.js';

export const submissions: Resource = {
  name: 'submissions', routes: submissionRoutes,
  openapi: {
    tag: { name: 'Submissions', description: 'New-business submissions; creating one is a job.' },
    paths: submissionPaths, schemas: submissionSchemas,
    jobResults: [ref('SubmissionResult')],
    eventData: {
      'submission.created': ref('Submission'),
      'submission.clearance_changed': ref('Submission'),
      'submission.requirements_updated': ref('Submission'),
    },
  },
};
