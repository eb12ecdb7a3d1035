// Runs the job service (`migrate` as argument: only apply migrations).
import { serviceMain } from '@partner/shared/main-helpers';
import { readJobConfig } from './config.js';
import { MIGRATIONS_DIR, SCHEMA, startJob } from './app.js';

serviceMain({ readConfig: readJobConfig, schema: SCHEMA, migrationsDir: MIGRATIONS_DIR, start: (c, logger) => startJob(c, { logger }) });
