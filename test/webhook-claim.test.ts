// The dispatcher's claim with a backlog (issue 47, item 3: fan-out PostgreSQL CPU per delivery): with
// thousands of deliveries due, on a table PostgreSQL has never analysed (every new database, and any
// table that grew since its last ANALYZE), a claim reads a few index entries per delivery it claims,
// not the whole backlog; and it still claims the oldest due first, within each endpoint's room,
// never a delivery of a disabled endpoint, and nothing twice.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, migrate, type Pool } from '@partner/shared/db/pg';
import { createLogger } from '@partner/shared/telemetry/logger';
import { MIGRATIONS_DIR, SCHEMA } from '../services/events/src/schema.js';
import { DISPATCHER_DB } from '../services/events/src/dispatcher/app.js';
import { CLAIM, claimDue, nextDue } from '../services/events/src/dispatcher/store.js';
import { useStack } from './support/use-stack.js';

const quiet = createLogger('test', 'silent');
const ENDPOINTS = ['we_a', 'we_b', 'we_c', 'we_off'];
/** Deliveries due per endpoint: a backlog of 4 × 10,000. */
const PER_ENDPOINT = 10_000;

describe('the webhook claim with a backlog of due deliveries', () => {
  const stack = useStack();
  let pool: Pool;

  beforeAll(async () => {
    const admin = new pg.Pool({ connectionString: stack.env.DATABASE_URL, max: 1 });
    try {
      await migrate(admin, SCHEMA, MIGRATIONS_DIR, quiet);
    } finally {
      await admin.end();
    }
    await stack.sql(
      `INSERT INTO events.webhook_endpoints (endpoint_id, tenant_id, partner_id, url, event_types, secret_sealed, status, disabled_reason)
       SELECT e, 't', 'p', 'https://hooks.example.com/' || e, '{*}', '\\x00', CASE WHEN e = 'we_off' THEN 'disabled' ELSE 'enabled' END,
              CASE WHEN e = 'we_off' THEN 'partner' END
         FROM unnest($1::text[]) e`,
      [ENDPOINTS],
    );
    // Interleaved as the feed writer makes them (one event, a delivery per endpoint), due an hour ago
    // and later, one millisecond apart per event; the disabled endpoint's are left pending (as a race
    // with its disabling could leave them) and never claimed. No ANALYZE: as on a new database.
    await stack.sql(
      `INSERT INTO events.webhook_deliveries (delivery_id, endpoint_id, tenant_id, partner_id, event_id, event_type, body, next_attempt_at)
       SELECT 'wd_' || e || '_' || n, e, 't', 'p', 'evt_' || n, 'job.succeeded', repeat('x', 400), now() - interval '1 hour' + n * interval '1 millisecond'
         FROM generate_series(1, $2::int) n, unnest($1::text[]) e`,
      [ENDPOINTS, PER_ENDPOINT],
    );
    pool = createPool({ url: stack.env.DATABASE_URL!, schema: SCHEMA, max: 2, applicationName: 'claim-test', logger: quiet, planner: DISPATCHER_DB.planner });
  });
  afterAll(async () => {
    await pool?.end();
  });

  interface PlanNode {
    'Node Type': string;
    'Relation Name'?: string;
    'Index Name'?: string;
    'Actual Rows': number;
    'Actual Loops': number;
    'Shared Hit Blocks': number;
    'Shared Read Blocks': number;
    Plans?: PlanNode[];
  }
  const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

  /** The claim statement's plan as it ran (EXPLAIN ANALYZE, rolled back). */
  async function claimPlan(limit: number, full: string[] = []): Promise<PlanNode> {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      const r = await c.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${CLAIM}`, [
        full,
        limit,
        '{}',
        16,
        '00000000-0000-4000-8000-000000000000',
        60_000,
      ]);
      return r.rows[0]!['QUERY PLAN'][0].Plan;
    } finally {
      await c.query('ROLLBACK');
      c.release();
    }
  }

  /** What a claim costs: the buffers it touched, its walks of the due index, its scans that read the table whole. */
  async function claimCost(limit: number, full: string[] = []) {
    const plan = await claimPlan(limit, full);
    const all = nodes(plan);
    return {
      // The top node's buffers are the statement's whole work (the walk and the subplans included).
      buffers: plan['Shared Hit Blocks'] + plan['Shared Read Blocks'],
      walks: all.filter((n) => n['Index Name'] === 'webhook_deliveries_due').map((n) => ({ loops: n['Actual Loops'], rows: n['Actual Rows'] })),
      wholeReads: all.filter((n) => n['Relation Name'] === 'webhook_deliveries' && /Seq Scan|Bitmap Heap Scan/.test(n['Node Type'])).length,
    };
  }

  it('reads in proportion to what it claims, not to the backlog (no bitmap or sequential scan of the due deliveries)', async () => {
    const pages = Number((await stack.sql<{ n: string }>("SELECT pg_relation_size('events.webhook_deliveries') / 8192 AS n"))[0]!.n);
    expect(pages).toBeGreaterThan(2_500);
    // 10 claimed from 40 candidates: some 500 buffers (index pages, 40 rows and their endpoints, 10
    // rows written with their index entries), one walk of the due index for the 40 candidates, each
    // then locked through its key. Reading the backlog touches every page of the table.
    const cost = await claimCost(10);
    expect(cost.buffers).toBeLessThan(pages / 3);
    expect(cost.walks).toEqual([{ loops: 1, rows: 40 }]);
    expect(cost.wholeReads).toBe(0);
    // Skipping an endpoint whose lane is full walks past its deliveries, still nowhere near the backlog.
    const skipping = await claimCost(10, ['we_a']);
    expect(skipping.buffers).toBeLessThan(pages / 3);
    expect(skipping.walks).toEqual([{ loops: 1, rows: 40 }]);
  });

  it('claims the oldest due first, within each endpoint’s room, never a disabled endpoint’s, and nothing twice', async () => {
    const claim = (limit: number, room: Map<string, number> = new Map()) =>
      claimDue(pool, { limit, room, defaultRoom: 16, leaseMs: 60_000, keks: [Buffer.alloc(32)], onSecretError: () => undefined });
    const first = await claim(9);
    // Events 1–3, each to the three enabled endpoints, in due order.
    expect(first.map((d) => d.deliveryId).sort()).toEqual(['we_a', 'we_b', 'we_c'].flatMap((e) => [1, 2, 3].map((n) => `wd_${e}_${n}`)).sort());
    // we_a holds no more room, we_b room for one: the rest is we_c's and we_b's one.
    const second = await claim(6, new Map([['we_a', 0], ['we_b', 1]]));
    expect(second.map((d) => d.deliveryId).sort()).toEqual(['wd_we_b_4', 'wd_we_c_4', 'wd_we_c_5', 'wd_we_c_6', 'wd_we_c_7', 'wd_we_c_8']);
    const held = await stack.sql<{ n: number }>("SELECT count(*)::int AS n FROM events.webhook_deliveries WHERE lease IS NOT NULL AND endpoint_id <> 'we_off'");
    expect(held[0]!.n).toBe(15);
    expect(await stack.sql("SELECT delivery_id FROM events.webhook_deliveries WHERE lease IS NOT NULL AND endpoint_id = 'we_off'")).toEqual([]);
    // The next due of an endpoint with room: we_a's 4th (we_b's and we_c's 4th are held).
    expect((await nextDue(pool, ['we_b', 'we_c']))?.getTime()).toBe(
      (await stack.sql<{ at: Date }>("SELECT next_attempt_at AS at FROM events.webhook_deliveries WHERE delivery_id = 'wd_we_a_4'"))[0]!.at.getTime(),
    );
  });
});
