// Webhooks under contention (issue 36, items 1 and 7): a disabled endpoint is never due — pinging it
// fails 409 `conflict` and queues nothing, and deliveries left pending on it delay no other tenant
// nor make the dispatcher spin — and endpoint maintenance (recover, ping, PATCH, delete) running
// beside the dispatcher's failure path and the feed writer makes no deadlock and no 5xx.
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { provision, submissionBody } from './support/fixtures.js';
import { scrape } from './support/metrics.js';
import { until } from './support/poll.js';
import { useReceivers } from './support/receiver.js';
import type { ApiResponse, Stack } from './support/stack.js';
import { useStack } from './support/use-stack.js';

type Endpoint = { endpointId: string; status: string; disabledReason?: string };
const wait = { prefer: 'wait=20' };

function helpers(stack: () => Stack) {
  return {
    job: (token: string, method: string, path: string, json?: unknown): Promise<ApiResponse> =>
      stack().api(method, path, { token, headers: wait, ...(json !== undefined ? { json } : {}) }),
    async create(token: string, url: string, eventTypes: string[]): Promise<Endpoint> {
      const res = await stack().api('POST', '/v1/webhook-endpoints', { token, headers: wait, json: { url, eventTypes } });
      expect(res.status, res.text).toBe(200);
      return res.body as Endpoint;
    },
    async submit(token: string): Promise<ApiResponse> {
      return stack().api('POST', '/v1/submissions', { token, headers: wait, json: submissionBody() });
    },
    async deliveries(token: string, id: string): Promise<Record<string, any>[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
      const res = await stack().api('GET', `/v1/webhook-endpoints/${id}/deliveries`, { token });
      expect(res.status, res.text).toBe(200);
      return res.body.items;
    },
  };
}

/** Looks for due deliveries the dispatcher made so far. */
async function looks(stack: Stack): Promise<number> {
  return (await scrape(stack.opsUrls.dispatcher!)).sum('partner_webhook_dispatcher_looks_total');
}

describe('webhooks: a disabled endpoint is never due', () => {
  let token = '';
  const stack = useStack(async (stack) => {
    await stack.startAll({ WEBHOOK_RETRY_SCHEDULE: '1,1,1', WEBHOOK_RETRY_JITTER: '0' }, { dispatcher: true });
    token = await provision(stack);
  });
  const receiver = useReceivers();
  const h = helpers(() => stack);

  it('PATCH disabled fails its pending deliveries with the reason; ping then fails 409 conflict naming the status and queues nothing; enabled again, ping works', async () => {
    const r = await receiver();
    r.answer = () => 500;
    const ep = await h.create(token, r.url, ['submission.created']);
    expect((await h.submit(token)).status).toBe(200);
    await until('the first attempt recorded, its retry pending', async () => {
      const [x] = await h.deliveries(token, ep.endpointId);
      return x?.status === 'pending' && x.lastResponseStatus === 500;
    });
    const disabled = await h.job(token, 'PATCH', `/v1/webhook-endpoints/${ep.endpointId}`, { status: 'disabled' });
    expect(disabled.status, disabled.text).toBe(200);
    const [d] = await h.deliveries(token, ep.endpointId);
    expect(d).toMatchObject({ status: 'failed', lastResponseStatus: 500 });
    expect(d!.lastError).toBe('the receiver answered 500; the endpoint was disabled by the partner');

    const ping = await h.job(token, 'POST', `/v1/webhook-endpoints/${ep.endpointId}/ping`);
    expect(ping.status, ping.text).toBe(409);
    expect(ping.body.error).toMatchObject({ code: 'conflict', retryable: false });
    expect(ping.body.error.message).toMatch(/is disabled \(reason: partner\)/);
    expect(ping.body.jobId).toBeDefined();
    // Nothing was queued: only the failed delivery of the submission exists.
    expect(await stack.sql('SELECT status FROM events.webhook_deliveries WHERE endpoint_id = $1', [ep.endpointId])).toEqual([{ status: 'failed' }]);

    // Enabled again: new deliveries go out (the failed one stays failed until a recover).
    r.answer = () => 200;
    const enabled = await h.job(token, 'PATCH', `/v1/webhook-endpoints/${ep.endpointId}`, { status: 'enabled' });
    expect(enabled.body).toMatchObject({ status: 'enabled' });
    const again = await h.job(token, 'POST', `/v1/webhook-endpoints/${ep.endpointId}/ping`);
    expect(again.status, again.text).toBe(200);
    await r.waitFor('the ping', (rs) => rs.some((x) => x.body.includes(again.body.eventId as string)));
    // The ping's success is recorded just after the receiver answered.
    await until('the ping recorded as succeeded, the old delivery still failed', async () => {
      const statuses = (await h.deliveries(token, ep.endpointId)).map((x) => x.status).sort();
      return statuses.join() === 'failed,succeeded';
    });
  });

  it("deliveries left pending on a disabled endpoint delay no other tenant's delivery, and the dispatcher sleeps between them", async () => {
    const stuck = await receiver();
    const ep = await h.create(token, stuck.url, ['submission.created']);
    expect((await h.job(token, 'PATCH', `/v1/webhook-endpoints/${ep.endpointId}`, { status: 'disabled' })).status).toBe(200);
    // What 850 pings of a disabled endpoint left before the fix (nothing makes them now): 2,000
    // deliveries pending and long due, older than anything else, more than a claim's window.
    await stack.sql(
      `INSERT INTO events.webhook_deliveries (delivery_id, endpoint_id, tenant_id, partner_id, event_id, event_type, body, next_attempt_at)
       SELECT 'whd_' || md5(w.endpoint_id || g), w.endpoint_id, w.tenant_id, w.partner_id, 'evt_stuck_' || g, 'webhook_endpoint.ping', '{}', now() - interval '1 hour'
         FROM events.webhook_endpoints w, generate_series(1, 2000) g WHERE w.endpoint_id = $1`,
      [ep.endpointId],
    );

    // Another tenant: its receiver fails the first attempt, so its retry (1 s later) bounds a window
    // in which the only due deliveries are the stuck ones.
    const other = await stack.token(await stack.createClient());
    const r = await receiver();
    r.answer = (_, i) => (i === 0 ? 500 : 200);
    await h.create(other, r.url, ['submission.created']);
    const t0 = Date.now();
    expect((await h.submit(other)).status).toBe(200);
    await r.waitFor('the first attempt', (rs) => rs[0], 10_000);
    const before = await looks(stack);
    await r.waitFor('the retry', (rs) => rs[1], 10_000);
    const during = (await looks(stack)) - before;
    const arrived = r.received[0]!.at - t0;
    // Before the fix the stuck rows filled every claim window: nothing else went out, and the
    // dispatcher looked every 5 ms (about 200 looks in this window). Now: a handful.
    expect(during, `looks between the attempt and its retry (first attempt after ${arrived} ms)`).toBeLessThan(30);
    expect(stuck.received).toHaveLength(0);
    expect(await stack.sql("SELECT count(*)::int AS n FROM events.webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending' AND attempts = 0", [ep.endpointId])).toEqual([
      { n: 2000 },
    ]);
  });
});

/** A loopback port nobody listens on: every attempt is refused at once (the fast failure path). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('webhooks: recover, ping, PATCH and delete beside the failing dispatcher and the feed writer', () => {
  let token = '';
  const stack = useStack(async (stack) => {
    await stack.startAll(
      // Failing deliveries retried every 0.2 s, endpoints disabled after 2 s of failures: the
      // dispatcher's failure and disable paths run all the time.
      { WEBHOOK_RETRY_SCHEDULE: Array(30).fill('0.2').join(','), WEBHOOK_RETRY_JITTER: '0', WEBHOOK_DISABLE_AFTER_HOURS: String(2 / 3600) },
      { dispatcher: true },
    );
    token = await provision(stack);
  });
  const h = helpers(() => stack);
  const deadlocks = async () => (await stack.sql<{ n: number }>('SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()'))[0]!.n;

  it('no deadlock (pg_stat_database.deadlocks unchanged) and no 5xx; recovers stay quick', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/hooks`;
    const eps = [await h.create(token, url, ['*']), await h.create(token, url, ['*']), await h.create(token, url, ['*'])];
    const since = new Date(Date.now() - 60_000).toISOString();
    // A backlog of failing deliveries for recover to rewrite.
    await Promise.all(Array.from({ length: 10 }, () => h.submit(token)));
    const start = await deadlocks();

    const results: { what: string; res: ApiResponse }[] = [];
    const run = async (what: string, p: Promise<ApiResponse>) => results.push({ what, res: await p });
    const [a, b, doomed] = eps.map((e) => e.endpointId) as [string, string, string];
    for (let round = 0; round < 6; round++) {
      const ops: Promise<unknown>[] = [];
      for (const id of [a, b, doomed]) {
        ops.push(run(`recover ${id}`, h.job(token, 'POST', `/v1/webhook-endpoints/${id}/recover`, { since })));
        ops.push(run(`ping ${id}`, h.job(token, 'POST', `/v1/webhook-endpoints/${id}/ping`)));
        ops.push(run(`patch ${id}`, h.job(token, 'PATCH', `/v1/webhook-endpoints/${id}`, { description: `round ${round}` })));
      }
      ops.push(run(`disable ${b}`, h.job(token, 'PATCH', `/v1/webhook-endpoints/${b}`, { status: round % 2 ? 'enabled' : 'disabled' })));
      ops.push(run('submit', h.submit(token)));
      if (round === 3) ops.push(run(`delete ${doomed}`, h.job(token, 'DELETE', `/v1/webhook-endpoints/${doomed}`)));
      await Promise.all(ops);
    }

    for (const { what, res } of results) {
      const ok =
        res.status === 200 ||
        // A ping of an endpoint that was disabled (by the partner, or by its failures) just then.
        (what.startsWith('ping') && res.status === 409 && res.body.error?.code === 'conflict') ||
        // The deleted endpoint, after its deletion.
        (what.endsWith(doomed) && res.status === 404);
      expect(ok, `${what}: ${res.status} ${res.text}`).toBe(true);
    }
    expect(results.some((r) => r.what.startsWith('recover') && r.res.status === 200 && r.res.body.queued > 0)).toBe(true);

    // Three sequential recovers of an endpoint whose deliveries keep failing (before: over 10 s each).
    const took: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = Date.now();
      const res = await h.job(token, 'POST', `/v1/webhook-endpoints/${a}/recover`, { since });
      expect(res.status, res.text).toBe(200);
      took.push(Date.now() - t);
    }
    expect(Math.max(...took), `recover took ${took.join(', ')} ms`).toBeLessThan(5_000);

    // Backends report their counters at most once a second (PostgreSQL's stats flush interval): there
    // is no event to await for that, so give them that second, twice over, before reading.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await deadlocks()).toBe(start);
    expect(stack.logs.filter((l) => /deadlock detected|lock timeout|statement timeout/i.test(l))).toEqual([]);
  });
});
