// Runs the auth service (`migrate` as argument: only apply migrations). Telemetry starts first and
// the application is imported only afterwards, so its modules (pg, http) load instrumented.
import { startTelemetry } from '@partner/shared/telemetry';

await startTelemetry('auth');
const { serviceMain } = await import('@partner/shared/main-helpers');
const { readAuthConfig } = await import('./config.js');
const { MIGRATIONS_DIR, SCHEMA, startAuth } = await import('./app.js');

serviceMain({ readConfig: readAuthConfig, migrations: { schema: SCHEMA, dir: MIGRATIONS_DIR }, start: (c, logger) => startAuth(c, { logger }) });
