// Runs the auth service; `node dist/main.js migrate` only applies its migrations (Helm hook Job).
import { createLogger } from '@partner/shared/logger';
import { announceReady, main, runUntilSignalled } from '@partner/shared/lifecycle';
import { createPool } from '@partner/shared/pg';
import { readAuthConfig } from './config.js';
import { migrateAuth, SCHEMA, startAuth } from './app.js';

main(async () => {
  const config = readAuthConfig();
  const logger = createLogger('auth', config.logLevel);
  if (process.argv[2] === 'migrate') {
    const pool = createPool({ url: config.databaseUrl, schema: SCHEMA, max: 1, applicationName: 'auth-migrate', logger });
    await migrateAuth(pool, logger);
    await pool.end();
    return;
  }
  const service = await startAuth(config, { logger });
  announceReady(logger, service.ports);
  runUntilSignalled(service, logger);
});
