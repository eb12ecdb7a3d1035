// Runs the policy service (`migrate` as argument: only apply migrations).
import { serviceMain } from '@partner/shared/main-helpers';
import { readPolicyConfig } from './config.js';
import { MIGRATIONS_DIR, SCHEMA, startPolicy } from './app.js';

serviceMain({ readConfig: readPolicyConfig, schema: SCHEMA, migrationsDir: MIGRATIONS_DIR, start: (c, logger) => startPolicy(c, { logger }) });
