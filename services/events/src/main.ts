// Runs the events service (`migrate` as argument: only apply migrations). Telemetry starts first and
// the application is imported only afterwards, so its modules (pg, http) load instrumented.
import { startTelemetry } from '@partner/shared/telemetry/bootstrap';

await startTelemetry('events');
const { processMain } = await import('@partner/shared/process/run');
const { readEventsConfig } = await import('./config.js');
const { MIGRATIONS_DIR, SCHEMA } = await import('./schema.js');
const { startEvents } = await import('./app.js');
const { secretMigrationSteps } = await import('./webhooks/secrets.js');

processMain({ readConfig: readEventsConfig, migrations: { schema: SCHEMA, dir: MIGRATIONS_DIR, before: (c) => secretMigrationSteps(c.keyEncryptionKeys) }, start: (c, logger) => startEvents(c, { logger }) });
