// Job service configuration (environment variables; see README "Configuration").
import { EnvReader } from '@partner/shared/config/env';
import { readBase, readDb, readNats, type BaseConfig, type DbConfig, type NatsConfig } from '@partner/shared/process/config';
import { defaultPort } from '@partner/shared/process/registry';
import { DEFAULT_DUPLICATE_WINDOW_MS } from '@partner/shared/nats/client';

export interface JobConfig extends BaseConfig, DbConfig, NatsConfig {
  grpcPort: number;
  idempotencyRetentionHours: number;
  /** Replicas of the JetStream jobs stream (1 in development, 3 in production clusters). */
  streamReplicas: number;
  /** How often the relay looks for outbox rows the fast path did not publish. */
  relayIntervalMs: number;
  /** JetStream's duplicate window: a job published twice within it is stored once. */
  duplicateWindowMs: number;
  /**
   * Unsettled jobs untouched for this long, while the work queue is empty, are queued again (their
   * message was lost). Longer than the duplicate window, or JetStream would drop the new message.
   */
  staleJobAfterMs: number;
  sweepIntervalMs: number;
  /** The worker's claim commits without waiting for its WAL flush (repo.ts, ASYNC_COMMIT). */
  claimAsyncCommit: boolean;
}

export function readJobConfig(env = new EnvReader()): Readonly<JobConfig> {
  const duplicateWindowMs = env.int('JOBS_DUPLICATE_WINDOW_MS', { default: DEFAULT_DUPLICATE_WINDOW_MS, min: 1_000, max: 24 * 3_600_000, doc: 'the jobs stream\'s duplicate window: a job published twice within it is stored once' });
  const staleJobAfterMs = env.int('STALE_JOB_AFTER_MS', { default: 30 * 60_000, min: 1_000, max: 24 * 3_600_000, doc: 'unsettled jobs untouched this long, while the work queue is empty (their message was lost), are queued again; must exceed JOBS_DUPLICATE_WINDOW_MS', range: 'above JOBS_DUPLICATE_WINDOW_MS' });
  if (staleJobAfterMs <= duplicateWindowMs) {
    env.problem('STALE_JOB_AFTER_MS', `must be longer than JOBS_DUPLICATE_WINDOW_MS (${duplicateWindowMs}), or a job queued again would be dropped as a duplicate`);
  }
  return env.done({
    ...readBase(env, 'job', defaultPort('job', 'ops')),
    ...readDb(env, { batchInFlight: 1 }),
    ...readNats(env),
    grpcPort: env.int('JOB_GRPC_PORT', { default: defaultPort('job', 'grpc'), min: 0, max: 65535, doc: 'the job service\'s gRPC port' }),
    idempotencyRetentionHours: env.int('IDEMPOTENCY_RETENTION_HOURS', { default: 24, min: 1, max: 24 * 30, doc: 'how long an Idempotency-Key is remembered' }),
    streamReplicas: env.int('JOBS_STREAM_REPLICAS', { default: 1, min: 1, max: 5, doc: 'replicas of the JetStream jobs stream (1 in development, 3 in production clusters)' }),
    relayIntervalMs: env.int('OUTBOX_RELAY_INTERVAL_MS', { default: 1_000, min: 50, max: 60_000, doc: 'how often the outbox relay publishes what the fast path could not' }),
    duplicateWindowMs,
    staleJobAfterMs,
    claimAsyncCommit: env.bool('JOB_CLAIM_ASYNC_COMMIT', {
      default: true,
      doc: "the worker's claim (accepted -> running) commits without waiting for its WAL flush: safe while every job's effect is a synchronous commit in the same PostgreSQL database (one DATABASE_URL, a schema per service), which flushes the claim before it; false if a service's data moves to another server",
    }),
    sweepIntervalMs: env.int('SWEEP_INTERVAL_MS', { default: 60_000, min: 100, max: 3_600_000, doc: 'how often the stale-job sweep runs' }),
  });
}
