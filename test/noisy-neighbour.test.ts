// One partner must not be able to degrade the service for another (issue 36). A noisy partner,
// staying within its rate limit, holds its whole share of waiting requests and floods the gateway
// with deeply nested bodies, huge arrays and pings of a disabled webhook endpoint; meanwhile a quiet
// partner in another tenant keeps its normal health latency and its webhook deliveries. The bounds
// are behavioural and generous (the attack took the quiet partner's health calls to 10 s and stopped
// its deliveries for good); the figures themselves are measured by `npm run bench`.
import { describe, expect, it } from 'vitest';
import { provision, submissionBody } from './support/fixtures.js';
import { scrape } from './support/metrics.js';
import { until } from './support/poll.js';
import { useReceivers } from './support/receiver.js';
import { useStack } from './support/use-stack.js';
import { runProcess } from './support/run.js';
import { ROOT } from './support/stack.js';
import { join } from 'node:path';

const CAP = 5;

/** Requests held open (Prefer: wait) by raw fetch, released together with release(). */
function heldRequests() {
  const aborts = new AbortController();
  const done: Promise<unknown>[] = [];
  return {
    open(url: string, headers: Record<string, string>): void {
      done.push(fetch(url, { headers, signal: aborts.signal }).then((r) => r.text()).catch(() => undefined));
    },
    async release(): Promise<void> {
      aborts.abort();
      await Promise.all(done);
    },
  };
}

describe('a noisy partner and a quiet one', () => {
  let noisy: string;
  let quiet: string;
  const stack = useStack(async (stack) => {
    await stack.startAll(
      {
        MAX_WAITERS_PER_PARTNER: String(CAP),
        WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '1,2',
        WEBHOOK_RETRY_JITTER: '0',
      },
      { dispatcher: true },
    );
    noisy = await provision(stack);
    quiet = await stack.token(await stack.createClient());
  });
  const receiver = useReceivers();
  const gatewayGauge = async (name: string) => (await scrape(stack.gatewayOpsUrl)).sum(name);

  /** A job that stays unsettled for a while (sandbox), for the noisy partner to wait on. */
  async function slowJob(): Promise<string> {
    const res = await stack.api('POST', '/v1/submissions', { token: noisy, json: submissionBody('sandbox:delay=12') });
    expect(res.status, res.text).toBe(202);
    return res.body.id as string;
  }

  it('holds at most MAX_WAITERS_PER_PARTNER waits per partner: beyond it 429 rate_limited with Retry-After, nothing created, others unaffected', async () => {
    const jobId = await slowJob();
    const held = heldRequests();
    try {
      for (let i = 0; i < CAP; i++) held.open(`${stack.gatewayUrl}/v1/jobs/${jobId}`, { authorization: `Bearer ${noisy}`, prefer: 'wait=30' });
      await until('the noisy partner holds its whole share', async () => (await gatewayGauge('partner_gateway_partners_at_wait_cap')) === 1);

      const poll = await stack.api('GET', `/v1/jobs/${jobId}`, { token: noisy, headers: { prefer: 'wait=10' } });
      expect(poll.status, poll.text).toBe(429);
      expect(poll.body.error).toMatchObject({ code: 'rate_limited', retryable: true });
      expect(poll.body.error.message).toContain('waiting requests');
      const retryAfter = Number(poll.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(30);
      expect(poll.headers.get('preference-applied')).toBeNull();

      // A mutation refused at the cap creates nothing: not even with an Idempotency-Key it can resend.
      const externalRef = `capped-${Date.now()}`;
      const create = await stack.api('POST', '/v1/submissions', {
        token: noisy,
        headers: { prefer: 'wait=10', 'idempotency-key': externalRef },
        json: submissionBody(externalRef),
      });
      expect(create.status, create.text).toBe(429);
      expect(create.body.error.code).toBe('rate_limited');
      const found = await stack.api('GET', `/v1/submissions?externalRef=${externalRef}`, { token: noisy });
      expect(found.body.items).toEqual([]);
      const feed = await stack.api('GET', '/v1/events?limit=1', { token: noisy, headers: { prefer: 'wait=5' } });
      expect(feed.status).toBe(429);

      // The same partner without Prefer: wait is served as usual.
      const plain = await stack.api('GET', `/v1/jobs/${jobId}`, { token: noisy });
      expect(plain.status).toBe(200);
      expect(plain.body.status).toBe('processing');

      // Another partner still gets its waits honoured.
      const other = await stack.api('GET', '/v1/events?limit=1', { token: quiet, headers: { prefer: 'wait=1' } });
      expect(other.status, other.text).toBe(200);
      expect(other.headers.get('preference-applied')).toBe('wait=1');

      const m = await scrape(stack.gatewayOpsUrl);
      expect(m.sum('partner_gateway_wait_partner_cap_rejected_total')).toBeGreaterThanOrEqual(3);
      expect(m.sum('partner_gateway_max_waiters_per_partner')).toBe(CAP);
      expect(stack.logs.join('\n')).toContain('a partner holds its whole share of waiting requests');
    } finally {
      await held.release();
    }
    // Clients that go away release their slots.
    await until('the noisy partner is below its cap again', async () => (await gatewayGauge('partner_gateway_partners_at_wait_cap')) === 0);
    const again = await stack.api('GET', `/v1/jobs/${jobId}`, { token: noisy, headers: { prefer: 'wait=1' } });
    expect(again.status).toBe(200);
    expect(again.headers.get('preference-applied')).toBe('wait=1');
  });

  it("keeps the quiet partner's health latency and webhook deliveries while the noisy one floods within its rate limit", async () => {
    // The quiet partner's endpoint, and a baseline of its health calls and of one delivery.
    const inbox = await receiver();
    const ep = await stack.api('POST', '/v1/webhook-endpoints', { token: quiet, headers: { prefer: 'wait=20' }, json: { url: inbox.url, eventTypes: ['submission.created'] } });
    expect(ep.status, ep.text).toBe(200);
    const quietDelivery = async (): Promise<number> => {
      const sent = await stack.api('POST', '/v1/submissions', { token: quiet, headers: { prefer: 'wait=20' }, json: submissionBody() });
      expect(sent.status, sent.text).toBe(200);
      const at = Date.now();
      await inbox.waitFor('the quiet partner\'s delivery', (rs) => rs.some((r) => r.body.includes(sent.body.submissionId as string)), 15_000);
      return Date.now() - at;
    };
    const health = async (): Promise<number> => {
      const t = performance.now();
      const res = await stack.api('GET', '/v1/health', { token: quiet });
      expect(res.status).toBe(200);
      return performance.now() - t;
    };
    const baseline: number[] = [];
    for (let i = 0; i < 20; i++) baseline.push(await health());
    const baselineDeliveryMs = await quietDelivery();

    // The noisy partner's disabled endpoint, pinged over and over (subscribed to an event this test
    // never causes: anything it receives came from a ping).
    const own = await receiver();
    const noisyEp = await stack.api('POST', '/v1/webhook-endpoints', { token: noisy, headers: { prefer: 'wait=20' }, json: { url: own.url, eventTypes: ['attachment.deleted'] } });
    expect(noisyEp.status, noisyEp.text).toBe(200);
    const endpointId = noisyEp.body.endpointId as string;
    const off = await stack.api('PATCH', `/v1/webhook-endpoints/${endpointId}`, { token: noisy, headers: { prefer: 'wait=20' }, json: { status: 'disabled' } });
    expect(off.status, off.text).toBe(200);
    const pinged = await stack.api('POST', `/v1/webhook-endpoints/${endpointId}/ping`, { token: noisy, headers: { prefer: 'wait=20' } });
    expect(pinged.status, pinged.text).toBe(409);
    expect(pinged.body.error.code).toBe('conflict');
    expect(pinged.body.error.message).toContain('disabled');

    const nested = '{"a":'.repeat(8_000) + '1' + '}'.repeat(8_000);
    const huge = `[${'0,'.repeat(199_999)}0]`;
    const jobId = await slowJob();
    const held = heldRequests();
    for (let i = 0; i < CAP; i++) held.open(`${stack.gatewayUrl}/v1/jobs/${jobId}`, { authorization: `Bearer ${noisy}`, prefer: 'wait=30' });
    await until('the noisy partner holds its whole share', async () => (await gatewayGauge('partner_gateway_partners_at_wait_cap')) === 1);

    // About 40 requests a second for 6 s (the default limit is 50/s with a burst of 100).
    const statuses: Record<string, number[]> = { nested: [], huge: [], ping: [], wait: [] };
    const flood: Promise<void>[] = [];
    const send = (kind: keyof typeof statuses, go: () => Promise<{ status: number }>) =>
      flood.push(go().then((r) => void statuses[kind]!.push(r.status)));
    const floodUntil = Date.now() + 6_000;
    const during: number[] = [];
    let deliveryDuringMs = 0;
    const quietSide = (async () => {
      deliveryDuringMs = await quietDelivery();
      while (Date.now() < floodUntil) during.push(await health());
    })();
    for (let i = 0; Date.now() < floodUntil; i++) {
      const kind = (['nested', 'huge', 'ping', 'wait'] as const)[i % 4]!;
      if (kind === 'nested') send(kind, () => stack.api('POST', '/v1/submissions', { token: noisy, body: nested, headers: { 'content-type': 'application/json' } }));
      if (kind === 'huge') send(kind, () => stack.api('POST', '/v1/submissions', { token: noisy, body: huge, headers: { 'content-type': 'application/json' } }));
      if (kind === 'ping') send(kind, () => stack.api('POST', `/v1/webhook-endpoints/${endpointId}/ping`, { token: noisy }));
      if (kind === 'wait') send(kind, () => stack.api('GET', `/v1/jobs/${jobId}`, { token: noisy, headers: { prefer: 'wait=30' } }));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await quietSide;
    await Promise.all(flood);
    await held.release();

    // The flood was answered as documented, at once: no 5xx, nothing queued for the bad bodies.
    expect(new Set(statuses.nested)).toEqual(new Set([400]));
    // 400 KB arrays count as 7 requests each (one per 64 KiB begun): some pay, the rest wait their turn.
    expect(statuses.huge.filter((x) => x !== 400 && x !== 429)).toEqual([]);
    expect(statuses.huge).toContain(400);
    expect(new Set(statuses.wait)).toEqual(new Set([429]));
    // Pings of a disabled endpoint are jobs that fail (202 now, 409 conflict when read).
    expect(new Set(statuses.ping)).toEqual(new Set([202]));
    const pending = await stack.api('GET', `/v1/webhook-endpoints/${endpointId}/deliveries?status=pending`, { token: noisy });
    expect(pending.body.items).toEqual([]);
    expect(own.received).toEqual([]);

    // The quiet partner did not notice (generous bounds: a loaded CI machine; the attack gave 10 s).
    const sorted = [...during].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const baseMedian = [...baseline].sort((a, b) => a - b)[10]!;
    expect(during.length).toBeGreaterThan(10);
    expect(median, `health median ${median.toFixed(1)} ms during the flood, ${baseMedian.toFixed(1)} ms before`).toBeLessThan(Math.max(250, 10 * baseMedian));
    expect(sorted.at(-1)!, 'slowest health call during the flood').toBeLessThan(3_000);
    expect(deliveryDuringMs, `delivery ${deliveryDuringMs} ms during the flood, ${baselineDeliveryMs} ms before`).toBeLessThan(5_000);
  });

  it("keeps the quiet partner's latency while the noisy one floods validate with 1 MB bodies (issue 48, 3)", async () => {
    // A gateway process of its own, so that the test's measuring shares no event loop with it, and
    // the flood from another process: the quiet partner's calls are timed from here.
    const gateway = await stack.spawnService('gateway', { PORT: '0', OPS_PORT: '0' });
    const base = `http://127.0.0.1:${gateway.ports.http}`;
    const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
    const products = async (): Promise<number> => {
      const t = performance.now();
      const res = await fetch(`${base}/v1/products`, { headers: { authorization: `Bearer ${quiet}` } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      return performance.now() - t;
    };
    // The noisy partner gets the default limit (the stack lifts it for other tests): 50/s, burst 100.
    const limited = await stack.createClient({ tenant: 'noisy-validate' });
    await stack.admin('client', 'limits', '--client', limited.clientId, '--rps', '50', '--burst', '100');
    const flooding = await stack.token(limited);
    const baseline: number[] = [];
    for (let i = 0; i < 100; i++) baseline.push(await products());

    // Eight validates in flight at all times for 5 s: 1 MB strings and 9,000 unknown keys, each
    // one request within the request rate (50/s) but 16 requests' worth of body.
    const flood = runProcess(process.execPath, [join(ROOT, 'bench/lib/validate-flood.mjs'), base, flooding, '5', '8'], { env: process.env });
    const during: number[] = [];
    const started = Date.now();
    while (Date.now() - started < 4_500) during.push(await products());
    const { code, stdout, stderr } = await flood;
    expect(code, stderr).toBe(0);
    const { statuses } = JSON.parse(stdout) as { statuses: Record<string, number> };

    // The flood was answered as documented: the bodies it could pay for judged, the rest 429.
    expect(Object.keys(statuses).filter((x) => x !== '200' && x !== '429' && x !== 'reset')).toEqual([]);
    expect(statuses['200']).toBeGreaterThan(0);
    expect(statuses['429']).toBeGreaterThan(0);
    // The quiet partner's latency stays near its own (bounds for a loaded machine; before the body's
    // cost counted, the flood took its p50 from 1.7 to 48 ms; `npm run bench` reports the ratios).
    const [p50, p95, p99] = [pct(during, 0.5), pct(during, 0.95), pct(during, 0.99)];
    const [b50, b95, b99] = [pct(baseline, 0.5), pct(baseline, 0.95), pct(baseline, 0.99)];
    const figures = `p50 ${p50.toFixed(1)} / p95 ${p95.toFixed(1)} / p99 ${p99.toFixed(1)} ms during the flood (${JSON.stringify(statuses)}), ${b50.toFixed(1)} / ${b95.toFixed(1)} / ${b99.toFixed(1)} ms before`;
    console.log(`validate flood: ${figures}`);
    expect(during.length, figures).toBeGreaterThan(50);
    // The median's floor, 30 ms: beside another suite on two cores it reached 19.7 ms (4.5 ms before
    // the flood) with the body's cost counted; without it, alone, the flood took it to 48 ms.
    expect(p50, figures).toBeLessThan(Math.max(3 * b50, 30));
    // The tail, as p95: on a CI machine running two suites and their stacks on two cores, the p99 of
    // ~200 calls is their second slowest, and one stall of another process took it to 501 ms in a
    // flood that cost the quiet partner nothing else (p50 23 ms). A wide bound, still far below the
    // flood's effect without the body's cost (p50 48 ms, p99 297 ms against 33 ms).
    expect(p95, figures).toBeLessThan(Math.max(6 * b95, 250));
  });
});
