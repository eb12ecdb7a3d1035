// Runs the job service (`migrate` as argument: only apply migrations). Telemetry starts first and
// the application is imported only afterwards, so its modules (pg, http) load instrumented.
import { startTelemetry } from '@partner/shared/telemetry/bootstrap';

await startTelemetry('job');
const { processMain } = await import('@partner/shared/process/run');
const { readJobConfig } = await import('./config.js');
const { MIGRATIONS_DIR, SCHEMA } = await import('./schema.js');
const { startJob } = await import('./app.js');

processMain({ readConfig: readJobConfig, migrations: { schema: SCHEMA, dir: MIGRATIONS_DIR }, start: (c, logger) => startJob(c, { logger }) });
