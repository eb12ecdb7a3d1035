// The feed writer commits asynchronously (synchronous_commit = off, docs/performance.md): a crash of
// PostgreSQL can lose its last commits, and PostgreSQL can be back before the writer sees any error
// (its next batch then runs on a new connection). test/async-commit-crash.test.ts crashes a server
// for it, which makes that timing only sometimes; this test makes the loss itself, every time: the
// suffix of the stored feed and the partner heads it advanced are rolled back by hand, as the crash
// would have, while the writer runs. The next event must make the writer read the stream again from
// the stored position (FeedWriter.committedThrough), so the lost events come back with their ids,
// partner_seqs and positions; skipped past, they would be missing from the feed for good.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { WRITER_LOCK } from '../services/events/src/writer.js';
import type { ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { until } from './support/poll.js';
import { PRODUCT, submissionBody } from './support/fixtures.js';

let client: ClientCreds;
let token: string;

const stack = useStack(async (stack) => {
  await stack.startAll();
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test General Liability');
  client = await stack.createClient();
  token = await stack.token(client);
});

interface Row {
  position: string;
  partner_seq: string;
  event_id: string;
}
const feed = () =>
  stack.sql<Row>('SELECT position::text, partner_seq::text, event_id FROM events.events WHERE tenant_id = $1 AND partner_id = $2 ORDER BY position', [
    client.tenant,
    client.partnerId,
  ]);
const submit = async () => {
  const r = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(`ref-${randomUUID()}`, 'Lost Commit Ltd'), headers: { prefer: 'wait=20' } });
  expect(r.status).toBe(200);
};

describe('the feed writer after PostgreSQL lost its last commit', () => {
  it('reads the stream again from the stored position: the lost events come back at their ids, partner_seqs and positions', async () => {
    for (let i = 0; i < 3; i++) await submit();
    // Each create makes two events (submission.created, job.succeeded).
    const before = await until('the three creates stored', async () => {
      const rows = await feed();
      return rows.length === 6 && rows;
    });
    // What a crash right behind the writer's last commits loses: the stored events from the fifth on
    // (every partner's), and the heads they advanced.
    const lostFrom = before[4]!.position;
    const gone = await stack.sql<{ n: string }>(
      `WITH gone AS (DELETE FROM events.events WHERE position >= $1 RETURNING tenant_id, partner_id),
            lost AS (SELECT tenant_id, partner_id, count(*) AS n FROM gone GROUP BY 1, 2),
            heads AS (UPDATE events.feed_heads h SET seq = h.seq - lost.n FROM lost
                       WHERE h.tenant_id = lost.tenant_id AND h.partner_id = lost.partner_id RETURNING 1)
       SELECT (SELECT count(*) FROM gone)::text AS n, (SELECT count(*) FROM heads) AS heads`,
      [lostFrom],
    );
    expect(Number(gone[0]!.n)).toBeGreaterThanOrEqual(2);
    expect((await feed()).length).toBe(4);

    // One more create: the writer's next batch finds the stored feed behind what it committed.
    await submit();
    const after = await until('the lost events and the new ones stored', async () => {
      const rows = await feed();
      return rows.length >= 8 && rows;
    });
    expect(after).toHaveLength(8);
    // The six of before, exactly where they were (the lost two stored again identically)…
    expect(after.slice(0, 6)).toEqual(before);
    // …and the partner's feed gapless from 1, each event once.
    expect(after.map((r) => Number(r.partner_seq))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(after.map((r) => r.event_id)).size).toBe(8);
  });

  // The batch's transaction is one call (feed_store, migration 0009): what the writer counts on, checked
  // on the function itself.
  it('feed_store commits asynchronously, keeps its planner settings to itself, takes the writer\'s lock, refuses a writer ahead of the stored feed, and stores an event repeated in a batch once', async () => {
    const c = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await c.connect();
    const call = (committedThrough: bigint) => `SELECT count(*)::int AS n FROM events.feed_store(${committedThrough}, '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}')`;
    const show = async (name: string) => (await c.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name];
    try {
      await c.query('SET synchronous_commit = on; SET enable_seqscan = on');
      // Its asynchronous commit lasts to the transaction's end (set in the body: a SET clause would be
      // undone as the function returns); the planner's index walks (SET clauses) end with the call.
      await c.query('BEGIN');
      expect((await c.query(call(0n))).rows).toEqual([{ n: 0 }]);
      expect(await show('synchronous_commit')).toBe('off');
      expect(await show('enable_seqscan')).toBe('on');
      await c.query('ROLLBACK');
      expect(await show('synchronous_commit')).toBe('on');

      // The lock is the writer's (WRITER_LOCK): held elsewhere, the call waits for it.
      const holder = new pg.Client({ connectionString: stack.env.DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('SELECT pg_advisory_lock($1)', [WRITER_LOCK]);
        await c.query('SET lock_timeout = 100');
        await expect(c.query(call(0n))).rejects.toMatchObject({ code: '55P03' });
        await c.query('RESET lock_timeout');
      } finally {
        await holder.end();
      }

      // Below what the writer committed: SQLSTATE EVLC1, with the stored position as its detail. (Each
      // transaction takes the writer's lock before it reads the position, so the stack's writer stores
      // nothing in between; the calls take it again, and roll back.)
      const storedThrough = async () => {
        await c.query('BEGIN');
        await c.query('SELECT pg_advisory_xact_lock($1)', [WRITER_LOCK]);
        const r = await c.query<{ p: string }>('SELECT GREATEST((SELECT coalesce(max(position), 0) FROM events.events), (SELECT swept_through FROM events.sweep_state)) AS p');
        return r.rows[0]!.p;
      };
      let p = await storedThrough();
      await expect(c.query(call(BigInt(p) + 1n))).rejects.toMatchObject({ code: 'EVLC1', detail: p });
      await c.query('ROLLBACK');
      p = await storedThrough();
      expect((await c.query(call(BigInt(p)))).rows).toEqual([{ n: 0 }]);

      // An event repeated within the batch is stored once, at its first position past the stored one
      // (a copy at or below it is not stored), and spends one partner_seq.
      const id = `evt_${randomUUID().replace(/-/g, '')}`;
      const positions = [BigInt(p), BigInt(p) + 1n, BigInt(p) + 2n].map(String);
      const stored = await c.query<{ event_id: string; position: string; partner_seq: string }>(
        'SELECT event_id, position::text, partner_seq::text FROM events.feed_store($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        [p, positions, [id, id, id], ['t-dedupe', 't-dedupe', 't-dedupe'], ['p-dedupe', 'p-dedupe', 'p-dedupe'], Array(3).fill('job.succeeded'), Array(3).fill('2026-11-28T00:00:00Z'), Array(3).fill('{}'), Array(3).fill('{}')],
      );
      expect(stored.rows).toEqual([{ event_id: id, position: String(BigInt(p) + 1n), partner_seq: '1' }]);
      await c.query('ROLLBACK');
    } finally {
      await c.end();
    }
  });
});
