// The settings every process reads the same way (logging and ops port, PostgreSQL, NATS), each with
// the shared EnvReader (config/env.ts), so a bad deployment fails at start naming the variable.
import type { EnvReader } from '../config/env.js';
import { DEFAULT_DB_TIMEOUTS, type DbTimeouts } from '../config/db-timeouts.js';

/** Settings every process shares: logging, ops port, bind host. */
export interface BaseConfig {
  serviceName: string;
  logLevel: string;
  host: string;
  opsPort: number;
  /**
   * Shutdown budget after SIGTERM (SHUTDOWN_DRAIN_MS): in-flight HTTP transfers, gRPC calls and jobs
   * get this long to finish before they are cut; the process exits at the latest 10 s after it. The
   * chart derives it and the pod's terminationGracePeriodSeconds from one value (drainSeconds).
   */
  drainMs: number;
}

export function readBase(env: EnvReader, serviceName: string, defaultOpsPort: number): BaseConfig {
  return {
    serviceName,
    logLevel: env.oneOf('LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
      default: 'info',
      doc: 'log level of the JSON logs on stdout',
    }),
    host: env.str('HOST', { default: '127.0.0.1', doc: 'address every listener binds to (0.0.0.0 in containers)' }),
    opsPort: env.int('OPS_PORT', { default: defaultOpsPort, min: 0, max: 65535, doc: '/livez, /readyz, /dependencies, /metrics' }),
    drainMs: env.int('SHUTDOWN_DRAIN_MS', { default: 20_000, min: 0, max: 3_600_000, doc: 'after SIGTERM, in-flight transfers, gRPC calls and jobs get this long before they are cut; the process exits at most 10 s later (the chart sets it from drainSeconds)' }),
  };
}

export interface DbConfig {
  databaseUrl: string;
  poolMax: number;
  /** Adaptive batching of the hot writes (db/batcher.ts): most calls per statement, 1 = off. */
  batchMaxSize: number;
  /** Adaptive batching: statements of one step running at once before calls queue into a batch. */
  batchInFlight: number;
  /** Server-side limits of every statement and lock wait (pg.ts createPool, withTx). */
  timeouts: DbTimeouts;
}

/**
 * The database settings of a service. `batchInFlight`: its default DB_BATCH_IN_FLIGHT (2; the job and
 * submission services 1: one statement at a time makes their batches big under load, which took a
 * sixth off the CPU per submit and added a sixth to the throughput at 64 connections, issue 47; the
 * dispatcher keeps 2, which its fan-out with hanging endpoints needs).
 */
export function readDb(env: EnvReader, defaults: { batchInFlight?: number } = {}): DbConfig {
  return {
    databaseUrl: env.url('DATABASE_URL', {
      default: 'postgres://postgres@127.0.0.1:5432/partner',
      protocols: ['postgres:', 'postgresql:'],
      doc: 'PostgreSQL; each service uses its own schema',
    }),
    poolMax: env.int('DB_POOL_MAX', { default: 10, min: 1, max: 200, doc: 'pool size per process. The hot statements are named prepared statements: behind PgBouncer, use session pooling, or transaction pooling with PgBouncer >= 1.21 and max_prepared_statements set' }),
    batchMaxSize: env.int('DB_BATCH_MAX_SIZE', { default: 64, min: 1, max: 1_000, doc: 'adaptive batching of the hot writes (SubmitJob and SettleJob in job, CreateSubmission in submission, successful webhook deliveries in dispatcher): most calls committed together in one statement; 1 turns batching off (docs/performance.md)' }),
    batchInFlight: env.int('DB_BATCH_IN_FLIGHT', { default: defaults.batchInFlight ?? 2, min: 1, max: 64, doc: 'statements of one batched step (job, submission, dispatcher) running at once; a call that finds fewer runs at once and alone, calls beyond share the next statement' }),
    timeouts: {
      statementMs: env.int('DB_STATEMENT_TIMEOUT_MS', { default: DEFAULT_DB_TIMEOUTS.statementMs, min: 100, max: 600_000, doc: 'PostgreSQL cancels a statement running longer (statement_timeout, per connection and per transaction); the call answers unavailable. Migrations run without it' }),
      lockMs: env.int('DB_LOCK_TIMEOUT_MS', { default: DEFAULT_DB_TIMEOUTS.lockMs, min: 10, max: 600_000, doc: 'PostgreSQL cancels a statement waiting longer for a lock (lock_timeout)' }),
    },
  };
}

export interface NatsConfig {
  natsUrl: string;
  /** Prefix of every subject and stream name, so several deployments (or test runs) share a server. */
  natsPrefix: string;
}

export function readNats(env: EnvReader): NatsConfig {
  const natsPrefix = env.str('NATS_PREFIX', { default: 'partner', doc: 'prefix of every subject and stream, so several deployments (or test runs) share a server', range: 'letters, digits, _ and -' });
  if (!/^[A-Za-z0-9_-]+$/.test(natsPrefix)) {
    env.problem('NATS_PREFIX', `may hold only letters, digits, "_" and "-", got "${natsPrefix}"`);
  }
  return { natsUrl: env.str('NATS_URL', { default: 'nats://127.0.0.1:4222', doc: 'NATS with JetStream (comma list for a cluster)' }), natsPrefix };
}
