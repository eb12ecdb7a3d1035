// Job service configuration (environment variables; see README "Configuration").
import { EnvReader, readBase, readDb, readNats, type BaseConfig, type DbConfig, type NatsConfig } from '@partner/shared/config';

export interface JobConfig extends BaseConfig, DbConfig, NatsConfig {
  grpcPort: number;
  idempotencyRetentionHours: number;
  /** Replicas of the JetStream jobs stream (1 in development, 3 in production clusters). */
  streamReplicas: number;
  /** How often the relay looks for outbox rows the fast path did not publish. */
  relayIntervalMs: number;
  /** Unsettled jobs untouched for this long are queued again (their message may have been lost). */
  staleJobAfterMs: number;
  sweepIntervalMs: number;
}

export function readJobConfig(env = new EnvReader()): Readonly<JobConfig> {
  return env.done({
    ...readBase(env, 'job', 9484),
    ...readDb(env),
    ...readNats(env),
    grpcPort: env.int('JOB_GRPC_PORT', { default: 50054, min: 0, max: 65535 }),
    idempotencyRetentionHours: env.int('IDEMPOTENCY_RETENTION_HOURS', { default: 24, min: 1, max: 24 * 30 }),
    streamReplicas: env.int('JOBS_STREAM_REPLICAS', { default: 1, min: 1, max: 5 }),
    relayIntervalMs: env.int('OUTBOX_RELAY_INTERVAL_MS', { default: 1_000, min: 50, max: 60_000 }),
    staleJobAfterMs: env.int('STALE_JOB_AFTER_MS', { default: 10 * 60_000, min: 1_000, max: 24 * 3_600_000 }),
    sweepIntervalMs: env.int('SWEEP_INTERVAL_MS', { default: 60_000, min: 100, max: 3_600_000 }),
  });
}
