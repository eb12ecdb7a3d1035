import { afterAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { DomainError } from '../domain/errors.js';
import { createLogger } from '../telemetry/logger.js';
import { createPool, prepared, registerPoolMetrics, withTx, type DbTimeouts, type Pool } from './pg.js';

describe('registerPoolMetrics', () => {
  it('reads connections in use and idle, waiting checkouts and the ceiling at scrape time', async () => {
    const pool = { totalCount: 7, idleCount: 3, waitingCount: 2 };
    const registry = new Registry();
    registerPoolMetrics(pool as unknown as Pool, registry, 10);
    const text = async () => registry.metrics();
    expect(await text()).toContain('partner_db_pool_connections{state="in_use"} 4');
    expect(await text()).toContain('partner_db_pool_connections{state="idle"} 3');
    expect(await text()).toContain('partner_db_pool_waiting_requests 2');
    expect(await text()).toContain('partner_db_pool_max_connections 10');
    pool.idleCount = 7;
    pool.waitingCount = 0;
    expect(await text()).toContain('partner_db_pool_connections{state="in_use"} 0');
    expect(await text()).toContain('partner_db_pool_waiting_requests 0');
  });
});

describe('prepared', () => {
  it('names a statement by its text: one text, one name, on every call', () => {
    const a = prepared('SELECT 1 WHERE $1::int = 1', [1]);
    expect(a).toEqual({ name: expect.stringMatching(/^p_[0-9a-f]{24}$/), text: 'SELECT 1 WHERE $1::int = 1', values: [1] });
    expect(prepared('SELECT 1 WHERE $1::int = 1', [2]).name).toBe(a.name);
    expect(prepared('SELECT 2 WHERE $1::int = 1', [1]).name).not.toBe(a.name);
  });
});

// The timeouts against the real PostgreSQL of the tests (DATABASE_URL's server, its postgres database).
describe('timeouts enforced by the server', () => {
  const url = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const logger = createLogger('pg-test', 'silent');
  const pools: Pool[] = [];
  const poolOf = (t: DbTimeouts, more: { max?: number; clientGraceMs?: number } = {}) => {
    const app = `pg-test-${randomUUID().slice(0, 8)}`;
    const pool = createPool({ url, schema: 'public', max: more.max ?? 2, applicationName: app, logger, timeouts: t, ...(more.clientGraceMs !== undefined ? { clientGraceMs: more.clientGraceMs } : {}) });
    pools.push(pool);
    return { pool, app };
  };
  /** Backends of an application name still running a statement. */
  const active = async (pool: Pool, app: string) =>
    (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle' AND pid <> pg_backend_pid()`, [app])).rows[0]!.n;
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
  });

  it('a plain query beyond statement_timeout is cancelled by the server; the connection goes on clean', async () => {
    const { pool, app } = poolOf({ statementMs: 200, lockMs: 100 }, { max: 1 });
    const err = await pool.query('SELECT pg_sleep(3)').catch((e: unknown) => e as { code?: string });
    expect(err).toMatchObject({ code: '57014' });
    // The one connection of the pool answers at once and nothing of the sleep runs on.
    expect((await pool.query<{ v: number }>('SELECT 1 AS v')).rows[0]!.v).toBe(1);
    expect(await active(pool, app)).toBe(0);
  });

  it('withTx: a statement beyond the timeout is unavailable (retryable), even on a session whose own timeout was lifted', async () => {
    const { pool, app } = poolOf({ statementMs: 200, lockMs: 100 }, { max: 1 });
    // Something left the session unbounded: SET LOCAL in withTx bounds the transaction anyway.
    await pool.query('SET statement_timeout = 0');
    const err = await withTx(pool, (c) => c.query('SELECT pg_sleep(3)')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'unavailable', retryable: true });
    // Rolled back and handed back clean: the same connection runs the next query outside any transaction.
    expect((await pool.query<{ v: number }>('SELECT 1 AS v')).rows[0]!.v).toBe(1);
    expect(await active(pool, app)).toBe(0);
  });

  it('every connection of a pool has JIT compilation off and the schema on its search path', async () => {
    const { pool } = poolOf({ statementMs: 5_000, lockMs: 1_000 }, { max: 1 });
    const r = await pool.query<{ jit: string; path: string }>("SELECT current_setting('jit') AS jit, current_setting('search_path') AS path");
    expect(r.rows[0]).toEqual({ jit: 'off', path: 'public' });
  });

  it('withTx genericPlans: the transaction runs prepared statements on their generic plan, planned once per connection; the session keeps its own mode', async () => {
    const { pool } = poolOf({ statementMs: 5_000, lockMs: 1_000 }, { max: 1 });
    // An unnested array parameter: estimated at 10 elements in the generic plan and at its length in a
    // custom one, so without the option PostgreSQL plans it again on every execution (custom plans).
    const probe = () => prepared('SELECT count(*)::int AS n FROM unnest($1::int[]) AS u(x) JOIN pg_class c ON c.oid = u.x', [[1, 2]]);
    const mode = (c: { query: Pool['query'] }) => c.query<{ m: string }>("SELECT current_setting('plan_cache_mode') AS m").then((r) => r.rows[0]!.m);
    const generic = await withTx(pool, async (c) => {
      const m = await mode(c);
      for (let i = 0; i < 7; i++) await c.query(probe());
      const r = await c.query<{ generic_plans: string; custom_plans: string }>('SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1', [probe().name]);
      return { m, ...r.rows[0]! };
    }, { genericPlans: true });
    expect(generic).toEqual({ m: 'force_generic_plan', generic_plans: '7', custom_plans: '0' });
    // Outside the transaction (SET LOCAL), the same connection is back to the server's default.
    expect(await mode(pool)).toBe('auto');
    const custom = await withTx(pool, async (c) => {
      for (let i = 0; i < 7; i++) await c.query(probe());
      return (await c.query<{ custom_plans: string }>('SELECT custom_plans FROM pg_prepared_statements WHERE name = $1', [probe().name])).rows[0]!.custom_plans;
    });
    expect(Number(custom)).toBeGreaterThan(0);
  });

  it('withTx: waiting for a lock beyond lock_timeout ends the statement (55P03 → unavailable), and the lock holder is unaffected', async () => {
    const { pool } = poolOf({ statementMs: 5_000, lockMs: 150 });
    const key = Math.floor(Math.random() * 1e9);
    const holder = await pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [key]);
      const t0 = Date.now();
      const err = await withTx(pool, (c) => c.query('SELECT pg_advisory_xact_lock($1)', [key])).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'unavailable', retryable: true });
      // Cancelled by the lock timeout, not the statement timeout.
      expect(Date.now() - t0).toBeLessThan(4_000);
      await holder.query('SELECT pg_advisory_unlock($1)', [key]);
    } finally {
      holder.release();
    }
  });

  it('a query the client gave up on (no answer from the server) destroys its connection instead of handing it back', async () => {
    // The server's timeout is lifted inside the transaction, so only the client's deadline can end it.
    const { pool } = poolOf({ statementMs: 200, lockMs: 100 }, { max: 1, clientGraceMs: 300 });
    let abandoned = 0;
    const err = await withTx(pool, async (c) => {
      await c.query('SET LOCAL statement_timeout = 0');
      abandoned = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      return c.query('SELECT pg_sleep(2)');
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unavailable' });
    expect(pool.totalCount).toBe(0);
    // The next query gets a new connection (another backend), not the one still sleeping.
    expect((await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid).not.toBe(abandoned);
  });
});
