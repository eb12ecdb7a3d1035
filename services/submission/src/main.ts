// Runs the submission service (`migrate` as argument: only apply migrations). Telemetry starts first
// and the application is imported only afterwards, so its modules (pg, http) load instrumented.
import { startTelemetry } from '@partner/shared/telemetry/bootstrap';

await startTelemetry('submission');
const { processMain } = await import('@partner/shared/process/run');
const { readSubmissionConfig } = await import('./config.js');
const { MIGRATIONS_DIR, SCHEMA } = await import('./schema.js');
const { startSubmission } = await import('./app.js');

processMain({
  readConfig: readSubmissionConfig,
  migrations: { schema: SCHEMA, dir: MIGRATIONS_DIR },
  start: (c, logger) => startSubmission(c, { logger }),
});
