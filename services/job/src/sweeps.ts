// The job service's periodic sweeps: expired idempotency keys removed, and stale unsettled jobs queued
// again, but only when the work queue is empty (a stale job's message may simply be waiting behind a
// backlog or for workers; only on an empty queue is it known to be lost).
import type { NatsConnection } from 'nats';
import type { Logger } from '@partner/shared/logger';
import type { natsNames } from '@partner/shared/nats';
import type { Pool } from '@partner/shared/pg';
import type { JobConfig } from './config.js';
import * as repo from './repo.js';

export function startSweeps(opts: {
  pool: Pool;
  config: JobConfig;
  names: ReturnType<typeof natsNames>;
  logger: Logger;
  /** The NATS connection once there is one. */
  nats: () => NatsConnection | undefined;
  /** Publishes what was queued again now, instead of at the relay's next interval. */
  requeued: () => void;
}): { stop(): void } {
  const { pool, config, names, logger } = opts;
  const queueIsEmpty = async (): Promise<boolean> => {
    const nc = opts.nats();
    if (!nc || nc.isClosed()) return false;
    const info = await (await nc.jetstreamManager({ timeout: 1_500 })).streams.info(names.jobsStream);
    return info.state.messages === 0;
  };
  const timer = setInterval(() => {
    void repo
      .sweepIdempotencyKeys(pool)
      .then((n) => n && logger.info({ removed: n }, 'expired idempotency keys removed'))
      .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'idempotency sweep failed'));
    void queueIsEmpty()
      .then((empty) => (empty ? repo.requeueStaleJobs(pool, config.staleJobAfterMs, names.jobSubject) : 0))
      .then((n) => {
        if (n) {
          logger.warn({ requeued: n }, 'stale unsettled jobs queued again');
          opts.requeued();
        }
      })
      .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'stale-job sweep failed'));
  }, config.sweepIntervalMs);
  return { stop: () => clearInterval(timer) };
}
