// Runs the submission service (`migrate` as argument: only apply migrations).
import { serviceMain } from '@partner/shared/main-helpers';
import { readSubmissionConfig } from './config.js';
import { MIGRATIONS_DIR, SCHEMA, startSubmission } from './app.js';

serviceMain({
  readConfig: readSubmissionConfig,
  schema: SCHEMA,
  migrationsDir: MIGRATIONS_DIR,
  start: (c, logger) => startSubmission(c, { logger }),
});
