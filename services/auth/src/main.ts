// Runs the auth service (`migrate` as argument: only apply migrations). Telemetry starts first and
// the application is imported only afterwards, so its modules (pg, http) load instrumented.
import { startTelemetry } from '@partner/shared/telemetry/bootstrap';

await startTelemetry('auth');
const { processMain } = await import('@partner/shared/process/run');
const { readAuthConfig } = await import('./config.js');
const { MIGRATIONS_DIR, SCHEMA } = await import('./schema.js');
const { startAuth } = await import('./app.js');

processMain({ readConfig: readAuthConfig, migrations: { schema: SCHEMA, dir: MIGRATIONS_DIR }, start: (c, logger) => startAuth(c, { logger }) });
