// The job service's periodic sweeps: expired idempotency keys removed, and stale unsettled jobs queued
// again, but only when the work queue is empty (a stale job's message may simply be waiting behind a
// backlog or for workers; only on an empty queue is it known to be lost).
import type { NatsConnection } from 'nats';
import type { Logger } from '@partner/shared/telemetry/logger';
import type { natsNames } from '@partner/shared/nats/client';
import type { Pool } from '@partner/shared/db/pg';
import type { LoopSpec } from '@partner/shared/process/loops';
import type { JobConfig } from './config.js';
import * as repo from './repo.js';

/** The two sweeps, as loops for startProcess (one restart policy: process/loops.ts). */
export function sweeps(opts: {
  pool: Pool;
  config: JobConfig;
  names: ReturnType<typeof natsNames>;
  logger: Logger;
  /** The NATS connection once there is one. */
  nats: () => NatsConnection | undefined;
  /** Publishes what was queued again now, instead of at the relay's next interval. */
  requeued: () => void;
}): LoopSpec[] {
  const { pool, config, names, logger } = opts;
  const queueIsEmpty = async (): Promise<boolean> => {
    const nc = opts.nats();
    if (!nc || nc.isClosed()) return false;
    const info = await (await nc.jetstreamManager({ timeout: 1_500 })).streams.info(names.jobsStream);
    return info.state.messages === 0;
  };
  return [
    {
      name: 'idempotency sweep',
      intervalMs: config.sweepIntervalMs,
      run: async () => {
        const n = await repo.sweepIdempotencyKeys(pool);
        if (n) logger.info({ removed: n }, 'expired idempotency keys removed');
      },
    },
    {
      name: 'stale-job sweep',
      intervalMs: config.sweepIntervalMs,
      run: async () => {
        const n = (await queueIsEmpty()) ? await repo.requeueStaleJobs(pool, config.staleJobAfterMs, names.jobSubject) : 0;
        if (n) {
          logger.warn({ requeued: n }, 'stale unsettled jobs queued again');
          opts.requeued();
        }
      },
    },
  ];
}
