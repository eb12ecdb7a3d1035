// Runs the policy service (`migrate` as argument: only apply migrations). Telemetry starts first and
// the application is imported only afterwards, so its modules (pg, http) load instrumented.
import { startTelemetry } from '@partner/shared/telemetry/bootstrap';

await startTelemetry('policy');
const { processMain } = await import('@partner/shared/process/run');
const { readPolicyConfig } = await import('./config.js');
const { MIGRATIONS_DIR, SCHEMA } = await import('./schema.js');
const { startPolicy } = await import('./app.js');

processMain({ readConfig: readPolicyConfig, migrations: { schema: SCHEMA, dir: MIGRATIONS_DIR }, start: (c, logger) => startPolicy(c, { logger }) });
