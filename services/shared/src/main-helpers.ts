// main.ts of a gRPC service: `node dist/main.js` runs it; `node dist/main.js migrate` only applies
// its migrations and exits (the Helm pre-install/pre-upgrade hook Job runs this).
import type { BaseConfig, DbConfig } from './config.js';
import { createLogger } from './logger.js';
import { announceReady, main, runUntilSignalled } from './lifecycle.js';
import { shutdownTelemetry } from './telemetry.js';
import { migrateSchema, type RunningService } from './service.js';

export function serviceMain<C extends BaseConfig & DbConfig>(opts: {
  readConfig(): C;
  schema: string;
  migrationsDir: string;
  start(config: C, logger: ReturnType<typeof createLogger>): Promise<Pick<RunningService, 'ports' | 'stop'>>;
}): void {
  main(async () => {
    const config = opts.readConfig();
    const logger = createLogger(config.serviceName, config.logLevel);
    if (process.argv[2] === 'migrate') {
      await migrateSchema(config, opts.schema, opts.migrationsDir, logger);
      await shutdownTelemetry();
      logger.flush();
      return;
    }
    const service = await opts.start(config, logger);
    announceReady(logger, service.ports);
    runUntilSignalled(service, logger, config.drainMs);
  });
}
