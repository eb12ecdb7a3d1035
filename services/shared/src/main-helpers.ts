// main.ts of every service process (after startTelemetry): `node dist/main.js` runs it until SIGTERM,
// announcing its ports once ready and shutting down in its service's order (lifecycle.ts); for a
// service that owns a schema, `node dist/main.js migrate` only applies its migrations and exits (the
// Helm pre-install/pre-upgrade hook Job runs this).
import type { BaseConfig, DbConfig } from './config.js';
import { createLogger } from './logger.js';
import { announceReady, main, runUntilSignalled } from './lifecycle.js';
import { shutdownTelemetry } from './telemetry.js';
import { migrateSchema } from './service.js';

export function serviceMain<C extends BaseConfig>(opts: {
  readConfig(): C;
  /** The schema the service owns and its migrations (absent for the gateway and the worker). */
  migrations?: C extends DbConfig ? { schema: string; dir: string } : never;
  start(config: C, logger: ReturnType<typeof createLogger>): Promise<{ ports: Record<string, number>; stop(): Promise<void> }>;
}): void {
  main(async () => {
    const config = opts.readConfig();
    const logger = createLogger(config.serviceName, config.logLevel);
    if (process.argv[2] === 'migrate') {
      if (!opts.migrations) throw new Error(`${config.serviceName} owns no schema: nothing to migrate`);
      await migrateSchema(config as C & DbConfig, opts.migrations.schema, opts.migrations.dir, logger);
      await shutdownTelemetry();
      logger.flush();
      return;
    }
    const service = await opts.start(config, logger);
    announceReady(logger, service.ports);
    runUntilSignalled(service, logger, config.drainMs);
  });
}
