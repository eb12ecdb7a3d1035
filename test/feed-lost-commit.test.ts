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
});
