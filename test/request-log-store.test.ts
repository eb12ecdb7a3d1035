// The request log's store (issue 45): a store that refuses the log writer's connections while 500
// submissions run costs the log, never a submission (each succeeds, at its usual latency), the lost
// entries are counted, the stream does not pile up, and logging resumes by itself once the store
// answers again; and the partition job drops a day partition older than the retention.
//
// The store goes down for real: the writer inserts as a role of its own (REQUEST_LOG_DATABASE_URL),
// and the test takes that role's right to log in away (ALTER ROLE … NOLOGIN) and ends its sessions,
// so PostgreSQL refuses every connection the writer makes ("role … is not permitted to log in").
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provision, submissionBody } from './support/fixtures.js';
import { scrape } from './support/metrics.js';
import { until } from './support/poll.js';
import { PG_ADMIN_URL } from './support/stack.js';
import { useStack } from './support/use-stack.js';

const ROLE = `reqlog_writer_${randomBytes(4).toString('hex')}`;
const SUBMISSIONS = 500;
const CONCURRENCY = 16;

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** Runs `n` submissions, `CONCURRENCY` at a time; returns each one's status and milliseconds. */
async function submit(run: (i: number) => Promise<{ status: number }>, n: number): Promise<{ statuses: number[]; ms: number[] }> {
  const statuses: number[] = [];
  const ms: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t0 = performance.now();
        const res = await run(i);
        ms.push(performance.now() - t0);
        statuses.push(res.status);
      }
    }),
  );
  return { statuses, ms };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('request log store', () => {
  let token: string;
  // Registered before useStack's: runs after the stack (and its database) is gone.
  afterAll(async () => {
    await admin(`DROP ROLE IF EXISTS ${ROLE}`);
  });
  const stack = useStack(async (s) => {
    await admin(`CREATE ROLE ${ROLE} LOGIN`);
    const url = new URL(s.env.DATABASE_URL!);
    url.username = ROLE;
    await s.startAll({
      REQUEST_LOG_DATABASE_URL: url.toString(),
      REQUEST_LOG_MAX_DELIVER: '3',
      REQUEST_LOG_RETRY_DELAY_MS: '100',
      REQUEST_LOG_PARTITION_INTERVAL_MS: '200',
    });
    // The writer's role may insert into the log and nothing else.
    await s.sql(`GRANT USAGE ON SCHEMA events TO ${ROLE}; GRANT INSERT ON events.request_log TO ${ROLE}`);
  });
  beforeAll(async () => {
    token = await provision(stack);
  });

  const logged = async (requestId: string) => {
    const res = await stack.api('GET', `/v1/requests?requestId=${requestId}`, { token });
    return res.status === 200 && res.body.items.length === 1;
  };

  it('loses only the log while the store refuses the writer: every submission succeeds, drops counted, logging resumes', async () => {
    const create = () => stack.api('POST', '/v1/submissions', { token, headers: { prefer: 'wait=20' }, json: submissionBody() });
    // The writer stores as its role; and the usual latency of a submission.
    await stack.api('GET', '/v1/health', { token, headers: { 'x-request-id': 'before-outage' } });
    await until('the log stores as the writer role', () => logged('before-outage'), 10_000);
    const usual = await submit(create, 100);
    expect(usual.statuses.every((s) => s === 200)).toBe(true);

    const before = await scrape(stack.opsUrls.events!);
    await admin(`ALTER ROLE ${ROLE} NOLOGIN`);
    await stack.sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [ROLE]);
    const refused = new pg.Client({ connectionString: (() => { const u = new URL(stack.env.DATABASE_URL!); u.username = ROLE; return u.toString(); })() });
    await expect(refused.connect()).rejects.toThrow(/not permitted to log in/);

    const during = await submit(create, SUBMISSIONS);
    expect(during.statuses.filter((s) => s !== 200)).toEqual([]);
    expect(during.statuses).toHaveLength(SUBMISSIONS);
    // At its usual latency (a generous bound: the machine is shared; the bench measures the cost).
    expect(median(during.ms)).toBeLessThan(median(usual.ms) * 3 + 50);

    // Every entry of the outage is dropped and counted once its batches used their deliveries.
    const stored = before.sum('partner_request_log_stored_total');
    const dropped = await until(
      'the entries of the outage counted as dropped',
      async () => {
        const m = await scrape(stack.opsUrls.events!);
        const n = m.sum('partner_request_log_dropped_total', { reason: 'store_unavailable' });
        return n >= SUBMISSIONS ? { n, m } : false;
      },
      30_000,
    );
    expect(dropped.m.sum('partner_request_log_store_failures_total')).toBeGreaterThan(0);
    expect(dropped.m.sum('partner_request_log_stored_total')).toBe(stored);
    // The stream did not pile up: nothing is left waiting for the writer.
    await until('no batch left in the request-log stream', async () => (await scrape(stack.opsUrls.events!)).sum('partner_request_log_writer_pending_batches') === 0, 10_000);
    // The gateway shipped them all: the loss was the store's.
    const gw = await scrape(stack.gatewayOpsUrl);
    expect(gw.sum('partner_request_log_dropped_total')).toBe(0);

    // The store answers again: logging resumes by itself.
    await admin(`ALTER ROLE ${ROLE} LOGIN`);
    await stack.api('GET', '/v1/health', { token, headers: { 'x-request-id': 'after-outage' } });
    await until('logging resumes after the outage', () => logged('after-outage'), 15_000);
  });

  it('drops a day partition older than the retention, keeps the recent ones and the days ahead', async () => {
    const DAY = 86_400_000;
    const day = (offset: number) => new Date(Math.floor(Date.now() / DAY) * DAY + offset * DAY);
    const name = (d: Date) => `request_log_p${d.toISOString().slice(0, 10).replace(/-/g, '')}`;
    const old = day(-40);
    const recent = day(-29);
    for (const d of [old, recent]) {
      await stack.sql(
        `BEGIN;
         CREATE TABLE events.${name(d)} PARTITION OF events.request_log FOR VALUES FROM ('${d.toISOString()}') TO ('${new Date(d.getTime() + DAY).toISOString()}');
         INSERT INTO events.request_log (id, tenant_id, partner_id, created_at, request_id, method, path, status, duration_ms, client_id, idempotent_replayed,
                                         request_headers, request_body_truncated, response_body_truncated)
           VALUES (gen_random_uuid(), 't', 'p', '${new Date(d.getTime() + 3_600_000).toISOString()}', 'r', 'GET', '/v1/health', 200, 1, 'c', false, '{}', false, false);
         COMMIT;`,
      );
    }
    const partitions = async () =>
      (await stack.sql<{ n: string }>(`SELECT c.relname AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events.request_log'::regclass`)).map((r) => r.n);
    await until('the partition past the retention dropped', async () => !(await partitions()).includes(name(old)), 10_000);
    const now = await partitions();
    expect(now).toContain(name(recent));
    // Today and the days ahead exist before any entry needs them.
    for (const offset of [0, 1, 2, 3]) expect(now).toContain(name(day(offset)));
    expect((await stack.sql<{ n: string }>(`SELECT count(*)::text AS n FROM events.request_log WHERE created_at < $1`, [day(-30).toISOString()]))[0]!.n).toBe('0');
    const m = await scrape(stack.opsUrls.events!);
    expect(m.sum('partner_request_log_partitions_dropped_total')).toBeGreaterThanOrEqual(1);
    expect(m.sum('partner_request_log_partition_job_last_success_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
  });
});
