// Webhook dispatcher configuration (environment variables; see services/events/README.md).
import { EnvReader } from '@partner/shared/config/env';
import { readBase, readDb, readNats, type BaseConfig, type DbConfig, type NatsConfig } from '@partner/shared/process/config';
import { readEventStream, type EventStreamConfig } from '@partner/shared/nats/event-outbox';
import { readAllowedPorts, readAllowLoopbackTargets } from '@partner/shared/net/webhook-targets';
import { defaultPort } from '@partner/shared/process/registry';
import { readKekSetting } from '@partner/shared/crypto/sealed-keys';

export interface DispatcherConfig extends BaseConfig, DbConfig, NatsConfig, EventStreamConfig {
  environment: string;
  /** One attempt's budget: connect, send, answer (a 2xx within it is a success). */
  timeoutMs: number;
  /** Waits after the 1st, 2nd, … failed attempt; after the last one the delivery fails. */
  retryScheduleMs: number[];
  /** Each wait is scheduled ± this fraction at random. */
  retryJitter: number;
  /** Sends at once to one endpoint from this process. */
  endpointConcurrency: number;
  /** Deliveries of one endpoint this process holds at once (sending or queued behind the sends). */
  endpointMaxInFlight: number;
  /** Deliveries this process holds at once, all endpoints together. */
  maxInFlight: number;
  /** An endpoint whose attempts failed for this long with no success in between is disabled. */
  disableAfterMs: number;
  /** Loopback targets allowed (local development and tests only); never other non-public ones. */
  allowLoopbackTargets: boolean;
  /** The TCP ports a target may use (WEBHOOK_ALLOWED_PORTS): a delivery to another port fails before connecting. */
  allowedPorts: number[];
  /** The key-encryption keys (AUTH_KEY_ENCRYPTION_KEY), newest first, that open the endpoints' signing secrets. */
  keyEncryptionKeys: Buffer[];
  /**
   * Longest sleep when no delivery is pending: new deliveries wake the dispatcher over NATS (and every
   * NATS reconnect makes it look again), so an idle dispatcher sends the database no query.
   */
  pollMs: number;
  /** How often the outbox relay of this service's own events (webhook_endpoint.disabled) runs. */
  relayIntervalMs: number;
}

export const DEFAULT_RETRY_SCHEDULE_S = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

export function readDispatcherConfig(env = new EnvReader()): Readonly<DispatcherConfig> {
  const schedule = env.list('WEBHOOK_RETRY_SCHEDULE', { default: DEFAULT_RETRY_SCHEDULE_S.map(String), doc: 'waits in seconds after the 1st, 2nd, … failed attempt; after the last one the delivery fails', range: 'seconds, each above 0, at most 7 days' });
  const retryScheduleMs = schedule.map((s) => (/^\d+(\.\d+)?$/.test(s) ? Math.round(Number(s) * 1000) : NaN));
  if (retryScheduleMs.length === 0 || retryScheduleMs.some((ms) => !(ms >= 1 && ms <= 7 * 24 * 3_600_000))) {
    env.problem('WEBHOOK_RETRY_SCHEDULE', 'must be a comma-separated list of waits in seconds (above 0, at most 7 days), e.g. 5,300,1800');
  }
  const jitter = Number(env.str('WEBHOOK_RETRY_JITTER', { default: '0.2', doc: 'each wait is scheduled ± this fraction at random', range: 'a fraction, 0 to below 1' }));
  if (!(jitter >= 0 && jitter < 1)) env.problem('WEBHOOK_RETRY_JITTER', 'must be a fraction from 0 to below 1');
  // Hours, possibly fractional (tests disable an endpoint after seconds).
  const disableAfterH = Number(env.str('WEBHOOK_DISABLE_AFTER_HOURS', { default: '120', doc: 'an endpoint whose attempts failed this long with no success in between is disabled (fractions allowed)', range: 'hours, above 0, at most 2160' }));
  if (!(disableAfterH > 0 && disableAfterH <= 24 * 90)) env.problem('WEBHOOK_DISABLE_AFTER_HOURS', 'must be a number of hours above 0 and at most 2160');
  const concurrency = env.int('WEBHOOK_ENDPOINT_CONCURRENCY', { default: 4, min: 1, max: 256, doc: 'sends at once to one endpoint from this dispatcher' });
  return env.done({
    ...readBase(env, 'dispatcher', defaultPort('dispatcher', 'ops')),
    ...readDb(env),
    ...readNats(env),
    ...readEventStream(env),
    environment: env.oneOf('ENVIRONMENT', ['uat', 'production'] as const, { default: 'uat', doc: 'uat or production (webhook targets may be http in uat)' }),
    timeoutMs: env.int('WEBHOOK_TIMEOUT_MS', { default: 10_000, min: 100, max: 120_000, doc: 'one attempt\'s budget: connect, send, answer (a 2xx within it is a success)' }),
    retryScheduleMs,
    retryJitter: jitter,
    endpointConcurrency: concurrency,
    endpointMaxInFlight: env.int('WEBHOOK_ENDPOINT_MAX_IN_FLIGHT', { default: 16, min: concurrency, max: 10_000, doc: 'deliveries of one endpoint this dispatcher holds at once (sending or queued behind the sends); at least WEBHOOK_ENDPOINT_CONCURRENCY' }),
    maxInFlight: env.int('WEBHOOK_MAX_IN_FLIGHT', { default: 256, min: 1, max: 100_000, doc: 'deliveries this dispatcher holds at once, all endpoints together' }),
    disableAfterMs: Math.round(disableAfterH * 3_600_000),
    allowLoopbackTargets: readAllowLoopbackTargets(env),
    allowedPorts: readAllowedPorts(env),
    keyEncryptionKeys: readKekSetting(env, "the same list as the events service's: opens the webhook endpoints' signing secrets (sealed at rest) to sign deliveries"),
    pollMs: env.int('WEBHOOK_POLL_MS', { default: 300_000, min: 10, max: 3_600_000, doc: 'longest sleep with no delivery pending (new deliveries wake the dispatcher over NATS)' }),
    relayIntervalMs: env.int('OUTBOX_RELAY_INTERVAL_MS', { default: 1_000, min: 10, max: 60_000, doc: 'how often the outbox relay of the dispatcher\'s own events (webhook_endpoint.disabled) runs' }),
  });
}
