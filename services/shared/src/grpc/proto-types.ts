// Message types generated from the protos (services/shared/src/generated, built not committed),
// re-exported under short names for the services.
export type { Job, Job__Output } from '../generated/partner/job/v1/Job.js';
export type { JobError } from '../generated/partner/job/v1/JobError.js';
export type { Submission } from '../generated/partner/submission/v1/Submission.js';
