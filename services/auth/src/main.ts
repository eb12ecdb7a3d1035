// Runs the auth service (`migrate` as argument: only apply migrations).
import { serviceMain } from '@partner/shared/main-helpers';
import { readAuthConfig } from './config.js';
import { MIGRATIONS_DIR, SCHEMA, startAuth } from './app.js';

serviceMain({ readConfig: readAuthConfig, schema: SCHEMA, migrationsDir: MIGRATIONS_DIR, start: (c, logger) => startAuth(c, { logger }) });
