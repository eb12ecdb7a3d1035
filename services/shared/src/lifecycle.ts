// Process lifecycle for every service's main.ts: run until SIGTERM/SIGINT, then shut down in order
// (stop accepting → drain → close pools → flush telemetry → exit), with a hard deadline so a stuck
// step cannot hang: the drain budget (SHUTDOWN_DRAIN_MS) plus 10 s for pools and telemetry.
import type { Logger } from './logger.js';
import { shutdownTelemetry } from './telemetry.js';

export interface Stoppable {
  stop(): Promise<void>;
}

/** Time after the drain budget for closing pools and flushing telemetry before the process is killed. */
export const SHUTDOWN_MARGIN_MS = 10_000;

export function runUntilSignalled(service: Stoppable, logger: Logger, drainMs = 20_000): void {
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
    service
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
