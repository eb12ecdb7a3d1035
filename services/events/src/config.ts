// Events service configuration (environment variables; see README "Configuration").
import { EnvReader } from '@partner/shared/config/env';
import { readBase, readDb, readNats, type BaseConfig, type DbConfig, type NatsConfig } from '@partner/shared/process/config';
import { readEventStream, type EventStreamConfig } from '@partner/shared/nats/event-outbox';
import { defaultAddress, defaultPort } from '@partner/shared/process/registry';
import { readKekSetting } from '@partner/shared/crypto/sealed-keys';

export interface EventsConfig extends BaseConfig, DbConfig, NatsConfig, EventStreamConfig {
  grpcPort: number;
  /** The auth service (AUTH_GRPC_ADDR): the partners an event for every partner is stored for. */
  grpc: { auth: string };
  grpcTimeoutMs: number;
  grpcCallStreams: boolean;
  /** Events older than this are swept from the feed; a cursor from before them is expired (410). */
  retentionMs: number;
  /** How often the retention sweep runs; each run deletes in batches of sweepBatch. */
  sweepIntervalMs: number;
  sweepBatch: number;
  /**
   * Secrets that sign feed cursors: the first signs, all verify. Empty: the key generated once into
   * events.cursor_keys (shared by replicas, kept across restarts).
   */
  cursorSecrets: string[];
  /** Webhook endpoints per partner (a create job over it fails limit_exceeded). */
  webhookEndpointLimit: number;
  /** How long a rotated-out webhook secret keeps signing beside the new one. */
  webhookSecretOverlapMs: number;
  /**
   * The key-encryption keys (AUTH_KEY_ENCRYPTION_KEY), newest first: the newest seals the webhook
   * signing secrets at rest, all open them; at start, secrets sealed under an older one are sealed again.
   */
  keyEncryptionKeys: Buffer[];
  /** The request log's writer and partitions (src/request-log/). */
  requestLog: {
    /** Where entries are inserted: REQUEST_LOG_DATABASE_URL, or the service's database when unset. */
    databaseUrl?: string;
    /** Day partitions older than this are dropped. */
    retentionMs: number;
    /** How often the partition job runs. */
    partitionIntervalMs: number;
    /** Days of partitions created ahead of today. */
    partitionsAheadDays: number;
    /** Deliveries of a batch at most before it is dropped (store down). */
    maxDeliver: number;
    /** Delay before a batch that could not be stored is delivered again. */
    retryDelayMs: number;
  };
}

const DAY_MS = 24 * 3_600_000;
export const CURSOR_SECRET_MIN_LENGTH = 32;

export function readEventsConfig(env = new EnvReader()): Readonly<EventsConfig> {
  const cursorSecrets = env.list('EVENTS_CURSOR_SECRET', { default: [], doc: 'comma list of keys (at least 32 characters each) signing feed cursors; the first signs, all verify. Unset: a key generated on first start, kept in events.cursor_keys', range: 'secrets of at least 32 characters' });
  if (cursorSecrets.some((s) => s.length < CURSOR_SECRET_MIN_LENGTH)) {
    env.problem('EVENTS_CURSOR_SECRET', `must be a comma-separated list of secrets of at least ${CURSOR_SECRET_MIN_LENGTH} characters each`);
  }
  // Days, possibly fractional (tests and UAT may keep events for seconds).
  const days = env.str('EVENT_RETENTION_DAYS', { default: '30', doc: 'how long the feed keeps events (fractions allowed); a cursor from before them is expired (410)', range: 'days, above 0, at most 3650' });
  const retentionDays = /^\d+(\.\d+)?$/.test(days) ? Number(days) : NaN;
  if (!(retentionDays > 0 && retentionDays <= 3650)) env.problem('EVENT_RETENTION_DAYS', `must be a number of days above 0 and at most 3650, got "${days}"`);
  return env.done({
    ...readBase(env, 'events', defaultPort('events', 'ops')),
    ...readDb(env),
    ...readNats(env),
    ...readEventStream(env),
    grpcPort: env.int('EVENTS_GRPC_PORT', { default: defaultPort('events', 'grpc'), min: 0, max: 65535, doc: 'the events service\'s gRPC port' }),
    grpc: {
      auth: env.str('AUTH_GRPC_ADDR', { default: defaultAddress('auth'), doc: 'where to reach the auth service (host:port): the partners an event for every partner is stored for' }),
    },
    grpcTimeoutMs: env.int('GRPC_TIMEOUT_MS', { default: 5_000, min: 50, max: 60_000, doc: 'default gRPC deadline' }),
    grpcCallStreams: false,
    retentionMs: Math.round(retentionDays * DAY_MS),
    sweepIntervalMs: env.int('EVENT_SWEEP_INTERVAL_MS', { default: 60_000, min: 100, max: 3_600_000, doc: 'how often events older than the retention are removed' }),
    sweepBatch: env.int('EVENT_SWEEP_BATCH', { default: 1_000, min: 1, max: 100_000, doc: 'events removed per statement by the retention sweep' }),
    cursorSecrets,
    webhookEndpointLimit: env.int('WEBHOOK_ENDPOINT_LIMIT', { default: 16, min: 1, max: 1_000, doc: 'webhook endpoints per partner (creating one more fails limit_exceeded)' }),
    keyEncryptionKeys: readKekSetting(env, "the same list as auth's (one key-encryption key per deployment, one Secret): seals the webhook endpoints' signing secrets at rest; the newest seals, older ones only unseal, and at start secrets sealed under an older one (or stored in plaintext before sealing) are sealed under the newest"),
    requestLog: {
      databaseUrl: env.optionalStr('REQUEST_LOG_DATABASE_URL', { doc: "where the request-log writer inserts entries (its own connections and role, schema events); unset: DATABASE_URL. Partitions are still created and dropped on DATABASE_URL's connections" }),
      retentionMs: env.int('REQUEST_LOG_RETENTION_DAYS', { default: 30, min: 1, max: 3650, doc: 'how long the request log (GET /v1/requests) keeps entries: day partitions whose whole day is older are dropped by the partition job' }) * DAY_MS,
      partitionIntervalMs: env.int('REQUEST_LOG_PARTITION_INTERVAL_MS', { default: 3_600_000, min: 100, max: 86_400_000, doc: 'how often the request-log partition job runs (creates the next days\' partitions, drops the expired)' }),
      partitionsAheadDays: env.int('REQUEST_LOG_PARTITIONS_AHEAD_DAYS', { default: 3, min: 1, max: 60, doc: 'days of request-log partitions created ahead of today' }),
      maxDeliver: env.int('REQUEST_LOG_MAX_DELIVER', { default: 3, min: 1, max: 100, doc: 'attempts to store a request-log batch (the store down) before its entries are dropped and counted' }),
      retryDelayMs: env.int('REQUEST_LOG_RETRY_DELAY_MS', { default: 1_000, min: 10, max: 60_000, doc: 'delay before a request-log batch that could not be stored is tried again' }),
    },
    webhookSecretOverlapMs: env.int('WEBHOOK_SECRET_OVERLAP_HOURS', { default: 24, min: 0, max: 24 * 30, doc: 'how long a rotated-out webhook secret keeps signing beside the new one' }) * 3_600_000,
  });
}
