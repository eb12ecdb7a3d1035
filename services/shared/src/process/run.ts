// What every main.ts runs (after startTelemetry): `node dist/main.js` starts the process (start.ts),
// announces its bound ports on stdout as one JSON line {"ready":true,"ports":{…}} (scripts/lib/
// launch.mjs and the tests wait for it) and runs until SIGTERM/SIGINT; then it stops in the one order
// of start.ts, with a hard deadline so a stuck step cannot hang — the drain budget (SHUTDOWN_DRAIN_MS)
// plus SHUTDOWN_MARGIN_MS — and flushes telemetry last. For a process that owns a schema,
// `node dist/main.js migrate` only applies its migrations and exits (the Helm hook Job runs this).
import type { BaseConfig, DbConfig } from './config.js';
import { createLogger, type Logger } from '../telemetry/logger.js';
import { shutdownTelemetry } from '../telemetry/bootstrap.js';
import { migrateSchema } from './start.js';
import type { MigrationSteps } from '../db/pg.js';

export interface Stoppable {
  stop(): Promise<void>;
}

/** Time after the drain budget for closing pools and flushing telemetry before the process is killed. */
export const SHUTDOWN_MARGIN_MS = 10_000;

export function runUntilSignalled(process_: Stoppable, logger: Logger, drainMs = 20_000): void {
  const graceMs = drainMs + SHUTDOWN_MARGIN_MS;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    process_
      .stop()
      .then(
        () => {
          logger.info('stopped');
          return 0;
        },
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          return 1;
        },
      )
      // Telemetry last: the spans of the shutdown itself are exported too.
      .then(async (code) => {
        await shutdownTelemetry();
        logger.flush?.();
        process.exit(code);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Runs a main function: a failure at start (bad config, unreachable dependency) exits non-zero. */
export function main(fn: () => Promise<void>): void {
  fn().catch(async (err: unknown) => {
    process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    await shutdownTelemetry(2_000);
    process.exit(1);
  });
}

/** Announces the process's bound ports on stdout as one JSON line, for supervisors and tests. */
export function announceReady(logger: Logger, ports: Record<string, number>): void {
  logger.info({ ready: true, ports }, 'ready');
}

/** The body of a main.ts: read the config, then `migrate` only, or start, announce and run until signalled. */
export function processMain<C extends BaseConfig>(opts: {
  readConfig(): C;
  /** The schema the process owns and its migrations (absent for the gateway, the worker, the dispatcher). */
  migrations?: C extends DbConfig ? { schema: string; dir: string; before?: (config: C) => MigrationSteps } : never;
  start(config: C, logger: Logger): Promise<{ ports: Record<string, number>; stop(): Promise<void> }>;
}): void {
  main(async () => {
    const config = opts.readConfig();
    const logger = createLogger(config.serviceName, config.logLevel);
    if (process.argv[2] === 'migrate') {
      if (!opts.migrations) throw new Error(`${config.serviceName} owns no schema: nothing to migrate`);
      await migrateSchema(config as C & DbConfig, opts.migrations.schema, opts.migrations.dir, logger, opts.migrations.before?.(config));
      await shutdownTelemetry();
      logger.flush();
      return;
    }
    const running = await opts.start(config, logger);
    announceReady(logger, running.ports);
    runUntilSignalled(running, logger, config.drainMs);
  });
}
