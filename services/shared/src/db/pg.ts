// PostgreSQL: one pool per service, its search_path pinned to the service's own schema and its
// timeouts enforced by the server (statement_timeout, lock_timeout), a versioned SQL migration
// runner (files NNNN_name.sql, applied once each, in order, under an advisory lock so replicas
// starting together do not race), and the pool's gauges.
import pg from 'pg';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../telemetry/logger.js';
import { Gauge, type Registry } from 'prom-client';
import { DomainError, sqlStateError, unavailable } from '../domain/errors.js';
import { isConnectionError } from '../domain/outage.js';
import { DEFAULT_DB_TIMEOUTS, type DbTimeouts } from '../config/db-timeouts.js';

export { DEFAULT_DB_TIMEOUTS, type DbTimeouts };

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// Dates (DATE columns) stay 'YYYY-MM-DD' strings: never shifted through a JS Date and a time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);
// NUMERIC stays a decimal string: amounts never pass through a float.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);

const statementNames = new Map<string, string>();

/**
 * A condition that makes its statement's transaction commit without waiting for the WAL flush
 * (`set_config('synchronous_commit', 'off', true)`, evaluated once, before the scan). Only for a
 * commit whose loss in a crash of PostgreSQL is redone with no one having been answered from it
 * (docs/operations.md, "Asynchronous commits: what a PostgreSQL crash may lose").
 */
export const ASYNC_COMMIT = `(SELECT set_config('synchronous_commit', 'off', true)) = 'off'`;

/**
 * A query as a named prepared statement: each connection parses and plans the text once, then only
 * binds and executes it. For the hot statements, where planning costs more than executing (the
 * SubmitJob statement: 0.43 ms unnamed, 0.15 ms prepared; docs/performance.md). The name is derived
 * from the text, so one text always has one name, on every connection.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (!name) {
    name = `p_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

/**
 * The client's own deadline comes this long after the server's: the server cancels a slow statement
 * first (and the connection stays usable); the client gives up only on a server that does not answer.
 */
const CLIENT_GRACE_MS = 5_000;

const poolTimeouts = new WeakMap<Pool, DbTimeouts>();

/**
 * Planner settings for a pool whose every statement is a lookup by key or an ordered walk of an index
 * that stops after a few rows (the webhook dispatcher: its claim, nextDue, its settlements): sequential
 * and bitmap scans, hash and merge joins only where nothing else can run the statement. Those plans
 * read a whole table, or all its due rows, and PostgreSQL picks them when its estimates say the table
 * is small: of a table that grew since its last ANALYZE, and of "ORDER BY … LIMIT n" under a filter it
 * cannot estimate (it guesses 0.5 % of the rows). The claim read every due delivery to keep the first
 * few hundred: 83,000 buffers a claim at 40,000 due (test/webhook-claim.test.ts), 40–100 ms each in
 * the bench's fan-out (docs/performance.md, "Issue 47, third session"). The feed writer's batch runs
 * under the same settings, as SET clauses of its function (events/migrations/0009_feed_store.sql).
 */
export const PLANNER_INDEX_WALKS = { enable_seqscan: 'off', enable_bitmapscan: 'off', enable_hashjoin: 'off', enable_mergejoin: 'off' } as const;

/** Planner settings (enable_* names and their values), as a pool's. */
export type PlannerSettings = Readonly<Record<string, 'on' | 'off'>>;

/**
 * A pool whose connections carry the timeouts as session settings (startup parameters), so plain
 * `pool.query` calls are bounded by the server too; withTx sets them again per transaction.
 *
 * JIT compilation is off on every connection (`jit=off`, a startup parameter): every statement here
 * is a short OLTP statement, and PostgreSQL compiles a plan as soon as its estimated cost passes
 * jit_above_cost, which a large table's estimates reach without the statement doing more work. The
 * webhook claim with 50,000 pending deliveries compiled ~50 functions per claim (64 ms of JIT in a
 * 321 ms claim); with JIT off the claim cost 0.03 ms of CPU per delivery against 0.11–0.13 ms
 * (docs/performance.md, "Issue 47: what changed", JIT).
 */
export function createPool(opts: {
  url: string;
  schema: string;
  max: number;
  applicationName: string;
  logger: Logger;
  timeouts?: DbTimeouts;
  /** How long after the server's statement timeout the client gives up by itself (tests shorten it). */
  clientGraceMs?: number;
  /**
   * Planner settings of every connection (startup parameters), for a process whose statements must
   * keep one shape of plan whatever the estimates (the webhook dispatcher: PLANNER_INDEX_WALKS).
   */
  planner?: PlannerSettings;
}): Pool {
  const t = opts.timeouts ?? DEFAULT_DB_TIMEOUTS;
  const grace = opts.clientGraceMs ?? CLIENT_GRACE_MS;
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max,
    application_name: opts.applicationName,
    options: [`-c search_path=${opts.schema} -c jit=off`, ...Object.entries(opts.planner ?? {}).map(([k, v]) => `-c ${k}=${v}`)].join(' '),
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: t.statementMs,
    lock_timeout: t.lockMs,
    // A session left in a transaction by a client that went away gives its locks back.
    idle_in_transaction_session_timeout: t.statementMs + grace,
    query_timeout: t.statementMs + grace,
  });
  poolTimeouts.set(pool, t);
  // An idle client's connection dropped (failover, pg_terminate_backend): the pool discards it; log only.
  pool.on('error', (err) => opts.logger.warn({ err: err.message }, 'idle PostgreSQL connection lost'));
  // A checked-out client whose connection dies emits 'error' too: its query rejects by itself and the
  // pool discards the client on release, but an unheard 'error' event would crash the process.
  pool.on('connect', (client) => {
    client.on('error', (err) => opts.logger.debug({ err: err.message }, 'PostgreSQL connection lost while in use'));
  });
  return pool;
}

/**
 * Pool gauges, read at scrape time: connections in use and idle, checkouts waiting for one, and the
 * configured ceiling. One pool per registry (each process has one pool per service).
 */
export function registerPoolMetrics(pool: Pool, registry: Registry, max: number): void {
  new Gauge({
    name: 'partner_db_pool_connections',
    help: 'PostgreSQL connections of the pool, by state (in_use, idle).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
      this.set({ state: 'idle' }, pool.idleCount);
    },
  });
  new Gauge({
    name: 'partner_db_pool_waiting_requests',
    help: 'Queries waiting for a free PostgreSQL connection of the pool.',
    registers: [registry],
    collect() {
      this.set(pool.waitingCount);
    },
  });
  new Gauge({ name: 'partner_db_pool_max_connections', help: 'Size limit of the PostgreSQL pool (DB_POOL_MAX).', registers: [registry] }).set(max);
}

/** True for errors that mean "the database is not reachable right now" rather than a bad query (domain/outage.ts). */
export { isConnectionError };

/**
 * Maps database-unreachable errors to a retryable `unavailable` DomainError, and errors whose SQLSTATE
 * class settles their retryability to what they stand for (sqlStateError: a value the database cannot
 * store is a non-retryable validation_error); rethrows the rest.
 */
export function dbError(err: unknown): never {
  if (err instanceof DomainError) throw err;
  if (isConnectionError(err)) throw unavailable('the database is unavailable; retry later', err);
  throw sqlStateError(err) ?? err;
}

/**
 * withTx's options: timeouts other than the pool's, and `genericPlans`: the transaction's prepared
 * statements run their generic plan (plan_cache_mode = force_generic_plan) instead of being planned
 * again on each execution. For transactions whose statements unnest array parameters into per-row
 * index probes (LATERAL subqueries): PostgreSQL estimates a parameter's array at 10 elements and a
 * bound one at its real length, so the generic plan always looks costlier than a custom one and is
 * never chosen, although its shape is the same (one nested loop of probes per row). The clearance
 * read of a submission's create (clearance.ts FACTS) took 1.2–3.5 ms to plan and 0.13–0.35 ms to run
 * (docs/performance.md); with its generic plan, 0.02 ms to plan.
 */
export type TxOptions = Partial<DbTimeouts> & {
  genericPlans?: boolean;
  /**
   * Statements without parameters (advisory locks whose keys are numbers or constants) sent in BEGIN's
   * round trip, after the SET LOCALs, in order: a transaction that begins with its locks saves a round
   * trip. Each is a statement of its own, so fn's first statement takes its snapshot after them.
   */
  lead?: readonly string[];
};

/**
 * Runs fn in a transaction on one client; rolls back on error. The transaction's statement and lock
 * timeouts are set with SET LOCAL (the pool's, or those of `options`), in the same round trip as BEGIN, so
 * no transaction runs unbounded whatever its session was left with. A client whose connection failed,
 * whose query the client itself gave up on (the server may still be running it, holding locks), or
 * whose rollback failed is destroyed, never handed back to the pool.
 */
export async function withTx<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>, options?: TxOptions): Promise<T> {
  const { genericPlans, lead = [], ...timeouts } = options ?? {};
  const t = { ...(poolTimeouts.get(pool) ?? DEFAULT_DB_TIMEOUTS), ...timeouts };
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    return dbError(err);
  }
  let broken: Error | undefined;
  try {
    await client.query(
      `BEGIN; SET LOCAL statement_timeout = ${Math.round(t.statementMs)}; SET LOCAL lock_timeout = ${Math.round(t.lockMs)}${
        genericPlans ? '; SET LOCAL plan_cache_mode = force_generic_plan' : ''
      }${lead.map((q) => `; ${q}`).join('')}`,
    );
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    if (isConnectionError(err)) broken = err as Error;
    else {
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e as Error;
      });
    }
    return dbError(err);
  } finally {
    client.release(broken ?? false);
  }
}

/**
 * A step a migration needs first, in code (e.g. sealing with a key the SQL cannot know), run on the
 * migrating connection under the migration lock, each time before that version is applied.
 */
export type MigrationSteps = Readonly<Record<string, (c: PoolClient) => Promise<void>>>;

/** Applies the migrations in dir to schema; returns the versions applied now. `before` names steps run before a version (MigrationSteps). */
export async function migrate(pool: Pool, schema: string, dir: string, logger: Logger, before: MigrationSteps = {}): Promise<string[]> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`);
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort();
  const client = await pool.connect();
  const applied: string[] = [];
  let broken = false;
  try {
    // Migrations (and waiting for another replica's) may take longer than any request: no timeouts
    // for this session until it goes back to the pool.
    await client.query('SET statement_timeout = 0; SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 0');
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await client.query<{ version: string }>(`SELECT version FROM ${schema}.schema_migrations`)).rows.map((r) => r.version),
    );
    for (const file of files) {
      const version = file.replace(/\.sql$/, '');
      if (done.has(version)) continue;
      const step = before[version];
      if (step) {
        await client.query(`SET search_path = ${schema}`);
        try {
          await step(client);
        } finally {
          await client.query('RESET search_path');
        }
      }
      await client.query('BEGIN');
      try {
        await client.query(`SET LOCAL search_path = ${schema}`);
        await client.query(readFileSync(join(dir, file), 'utf8'));
        await client.query(`INSERT INTO ${schema}.schema_migrations (version) VALUES ($1)`, [version]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${schema}/${file} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(version);
      logger.info({ schema, version }, 'migration applied');
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`migrate:${schema}`]).catch(() => undefined);
    // Back to the pool's timeouts (the connection's startup settings), or the connection is dropped.
    await client.query('RESET statement_timeout; RESET lock_timeout; RESET idle_in_transaction_session_timeout').catch(() => (broken = true));
    client.release(broken);
  }
  return applied;
}

/**
 * SQL rendering a timestamptz column as the API prints timestamps (YYYY-MM-DDTHH:mm:ss.sssZ), for
 * events built in the statement that makes the change. Exact for columns kept in whole milliseconds.
 */
export const sqlIso = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
