// The event feed's measurements (issue 14): settlement commit → event seen by a long-polling
// reader; feed read throughput against the policy list; idle long-polling readers (memory, and no
// database query while they wait).
import { randomUUID } from 'node:crypto';
import { memoryOf, sleep } from './stack.mjs';
import { calibrateClock, interleave, round, summarize, wallNow } from './load.mjs';
import { agents, request } from './http.mjs';
import { CountingPgProxy } from './pgproxy.mjs';
import { productHeaders, submissionBody, submitAtRate } from './phases.mjs';
import { stageTap } from './event-stages.mjs';

const feedCursor = async (stack, agent) => {
  const r = await request(`${stack.gatewayUrl}/v1/events?limit=1&since=2999-01-01T00:00:00Z`, { headers: productHeaders(stack), agent });
  if (r.status !== 200) throw new Error(`GET /v1/events answered ${r.status}: ${r.text}`);
  return r.body.nextCursor;
};

/**
 * One reader follows the feed (types=job.succeeded, Prefer: wait=30) while submissions are made at
 * ratePerS. For every job.succeeded event: the time from its timestamp (the settling UPDATE, in the
 * transaction that records the event; commit follows within the millisecond) to the reader having it.
 */
export async function feedWakeup(stack, { count, ratePerS }) {
  calibrateClock();
  const [agent, readerAgent] = agents(2);
  let cursor = await feedCursor(stack, readerAgent);
  const tap = await stageTap(stack);
  const seenAt = new Map();
  let stop = false;
  let readerErrors = 0;
  const reader = (async () => {
    while (!stop) {
      const r = await request(`${stack.gatewayUrl}/v1/events?types=job.succeeded&limit=200&cursor=${cursor}`, {
        headers: { ...productHeaders(stack), prefer: 'wait=2' },
        agent: readerAgent,
      }).catch(() => undefined);
      if (!r || r.status !== 200) {
        readerErrors++;
        await sleep(50);
        continue;
      }
      for (const e of r.body.items) seenAt.set(e.data.id, { at: r.endedAt, timestamp: Date.parse(e.timestamp) });
      cursor = r.body.nextCursor;
    }
  })();
  const { ids, errors: submitErrors } = await submitAtRate(stack, agent, { count, ratePerS });
  const deadline = Date.now() + 30_000;
  while (ids.some((id) => !seenAt.has(id)) && Date.now() < deadline) await sleep(50);
  stop = true;
  await reader;
  agent.destroy();
  readerAgent.destroy();
  const lat = ids.filter((id) => seenAt.has(id)).map((id) => seenAt.get(id).at - seenAt.get(id).timestamp);
  // The same events by stage (issue 34).
  const stages = await tap.stages(ids, (id) => seenAt.get(id)?.at);
  await tap.close();
  return {
    events: count,
    ratePerS,
    seen: lat.length,
    missing: ids.length - lat.length,
    errors: submitErrors + readerErrors,
    fromCommitMs: summarize(lat),
    stages,
  };
}

/** GET /v1/events?limit=100 (the oldest 100 events) against GET /v1/policies?limit=100, in alternating slices. */
export async function feedReads(stack, { rounds, seconds, connections }) {
  const headers = productHeaders(stack);
  const page100 = (status, body) => {
    try {
      return status === 200 && JSON.parse(body).items.length === 100;
    } catch {
      return false;
    }
  };
  const res = await interleave(
    [
      { name: 'feed', url: stack.gatewayUrl, request: { path: '/v1/events?limit=100', headers }, check: page100 },
      { name: 'policies', url: stack.gatewayUrl, request: { path: '/v1/policies?limit=100', headers }, check: page100 },
    ],
    { rounds, seconds, connections },
  );
  return { feed: res.feed, policies: res.policies, ratio: round(res.feed.rps / res.policies.rps, 2) };
}

/**
 * N readers hold an empty feed page (Prefer: wait=30) on one gateway: its extra RSS, and the
 * statements the events service sends PostgreSQL while they wait (through a counting proxy; the
 * gateway has no database). Then one submission: how long until every reader has its events.
 */
export async function idleFeedReaders(stack, { readers, windowMs }) {
  const proxy = new CountingPgProxy('events');
  await proxy.listen();
  await stack.stopService('events');
  await stack.startService('events', { env: { DATABASE_URL: stack.databaseUrlVia(proxy.port), EVENT_SWEEP_INTERVAL_MS: '3600000' } });
  await stack.stopService('gateway');
  const gateway = await stack.startService('gateway', { env: { MAX_WAITERS: String(Math.max(20_000, readers + 1_000)) } });
  const headers = productHeaders(stack, { principal: false });
  const [agent0] = agents(1);
  const cursor = await feedCursor(stack, agent0);
  for (let i = 0; i < 300; i++) await request(`${stack.gatewayUrl}/v1/events?cursor=${cursor}`, { headers, agent: agent0 });
  await sleep(1_000);
  const before = memoryOf(gateway.pid);

  const pool = agents(4);
  const answers = [];
  let connecting = 0;
  const slot = () => new Promise((resolve) => (connecting < 200 ? resolve() : setTimeout(() => resolve(slot()), 2)));
  const pending = [];
  const regStart = Date.now();
  for (let i = 0; i < readers; i++) {
    await slot();
    connecting++;
    pending.push(
      request(`${stack.gatewayUrl}/v1/events?cursor=${cursor}`, {
        headers: { ...headers, prefer: 'wait=30' },
        agent: pool[i % pool.length],
        onSocketConnected: () => connecting--,
      }).then(
        (r) => answers.push({ ok: r.status === 200 && r.body.items.length > 0, endedAt: r.endedAt, status: r.status }),
        (err) => answers.push({ ok: false, error: err.message }),
      ),
    );
  }
  // Every reader has read once (its empty page) and is now held: the events service has gone quiet
  // (no statement for a second), or 20 s passed.
  let quietSince = proxy.snapshot().statements;
  for (let i = 0; i < 20; i++) {
    await sleep(1_000);
    const now = proxy.snapshot().statements;
    if (now === quietSince) break;
    quietSince = now;
  }
  const held = memoryOf(gateway.pid);
  const q0 = proxy.snapshot().statements;
  const windowLen = Math.max(500, Math.min(windowMs, regStart + 25_000 - Date.now()));
  await sleep(windowLen);
  const queriesWhileIdle = proxy.snapshot().statements - q0;
  const heldEnd = memoryOf(gateway.pid);

  calibrateClock();
  const sentAt = wallNow();
  await request(`${stack.gatewayUrl}/v1/submissions`, {
    method: 'POST',
    headers: { ...headers, 'idempotency-key': randomUUID(), prefer: 'wait=15' },
    body: submissionBody(stack.productId),
    agent: agent0,
  });
  await Promise.race([Promise.all(pending), sleep(40_000)]);
  for (const a of [...pool, agent0]) a.destroy();
  const ok = answers.filter((a) => a.ok);
  // The events service back on its own database connection for what follows.
  await stack.stopService('events');
  await stack.startService('events');
  await proxy.close().catch(() => undefined);
  const statuses = {};
  for (const a of answers) if (!a.ok) statuses[a.status ?? a.error] = (statuses[a.status ?? a.error] ?? 0) + 1;
  return {
    readers,
    extraRssMb: round((held.rss - before.rss) / 1048576, 1),
    extraRssEndMb: round((heldEnd.rss - before.rss) / 1048576, 1),
    perReaderKb: round((held.rss - before.rss) / 1024 / readers, 2),
    windowMs: windowLen,
    queriesWhileIdle,
    answered: answers.length,
    ok: ok.length,
    errors: answers.length - ok.length,
    notOk: statuses,
    allAnsweredAfterSubmitMs: round(Math.max(...ok.map((a) => a.endedAt)) - sentAt, 1),
  };
}
