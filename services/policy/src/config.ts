// Policy service configuration (environment variables; see README "Configuration").
import { EnvReader } from '@partner/shared/config/env';
import { readBase, readDb, readNats, type BaseConfig, type DbConfig, type NatsConfig } from '@partner/shared/process/config';
import { readEventStream, type EventStreamConfig } from '@partner/shared/nats/event-outbox';
import { defaultPort } from '@partner/shared/process/registry';

export interface PolicyConfig extends BaseConfig, DbConfig, NatsConfig, EventStreamConfig {
  grpcPort: number;
  /** How often the event relay looks for outbox rows its fast path did not publish (admin commands write them). */
  relayIntervalMs: number;
  /**
   * Secrets that sign list cursors: the first signs, all verify (rotate by prepending a new one).
   * Empty: the service uses the key it generated once and keeps in its schema (policy.cursor_keys),
   * which every replica shares.
   */
  cursorSecrets: string[];
  /** How often the wall-clock sweeper looks for due transitions (policy active/expired, quote expired); 0: never. */
  sweepIntervalMs: number;
}

export const CURSOR_SECRET_MIN_LENGTH = 32;

export function readPolicyConfig(env = new EnvReader()): Readonly<PolicyConfig> {
  const cursorSecrets = env.list('POLICY_CURSOR_SECRET', { default: [], doc: 'comma list of keys (at least 32 characters each) signing list cursors; the first signs, all verify. Unset: a key generated on first start, kept in policy.cursor_keys', range: 'secrets of at least 32 characters' });
  if (cursorSecrets.some((s) => s.length < CURSOR_SECRET_MIN_LENGTH)) {
    env.problem('POLICY_CURSOR_SECRET', `must be a comma-separated list of secrets of at least ${CURSOR_SECRET_MIN_LENGTH} characters each`);
  }
  return env.done({
    ...readBase(env, 'policy', defaultPort('policy', 'ops')),
    ...readDb(env),
    ...readNats(env),
    ...readEventStream(env),
    relayIntervalMs: env.int('OUTBOX_RELAY_INTERVAL_MS', { default: 1_000, min: 50, max: 60_000, doc: 'how often the event relay publishes what the fast path could not' }),
    grpcPort: env.int('POLICY_GRPC_PORT', { default: defaultPort('policy', 'grpc'), min: 0, max: 65535, doc: 'the policy service\'s gRPC port' }),
    cursorSecrets,
    sweepIntervalMs: env.int('POLICY_SWEEP_INTERVAL_MS', { default: 60_000, min: 0, max: 3_600_000, doc: 'how often the wall-clock sweeper moves policies (pending → active → expired) and open quotes past validUntil (expired); 0 turns it off' }),
  });
}
