// The request log with NATS down (issue 45): the gateway cannot ship its batches, so it drops and
// counts them — every request is still answered at once — and the entries of requests made after
// NATS is back appear in the log. A NATS server of the test's own, stopped and started again.
import { describe, expect, it } from 'vitest';
import { provision } from './support/fixtures.js';
import { scrape } from './support/metrics.js';
import { until } from './support/poll.js';
import { useStackWithOwnNats } from './support/use-stack.js';

describe('request log without NATS', () => {
  let token: string;
  const { stack, nats } = useStackWithOwnNats(async (s) => {
    await s.startAll({ REQUEST_LOG_FLUSH_MS: '50' });
    token = await provision(s);
  });

  const logged = async (requestId: string) => {
    const res = await stack.api('GET', `/v1/requests?requestId=${requestId}`, { token });
    return res.status === 200 && res.body.items.length >= 1;
  };
  const gatewayDrops = async () => {
    const m = await scrape(stack.gatewayOpsUrl);
    return ['buffer_full', 'nats_unavailable', 'publish_failed'].reduce((n, reason) => n + m.sum('partner_request_log_dropped_total', { reason }), 0);
  };

  it('answers every request while the log cannot be shipped, counts the drops, and logs again once NATS is back', async () => {
    await stack.api('GET', '/v1/health', { token, headers: { 'x-request-id': 'before' } });
    await until('the log works', () => logged('before'), 10_000);
    expect(await gatewayDrops()).toBe(0);

    await nats().down();
    const times: number[] = [];
    for (let i = 0; i < 40; i++) {
      const t0 = performance.now();
      const res = await stack.api('GET', '/v1/health', { token, headers: { 'x-request-id': `down-${i}` } });
      times.push(performance.now() - t0);
      expect(res.status).toBe(200);
    }
    // Never waiting on the log: each answered well within the publish timeout (2 s) the batches wait for.
    expect(Math.max(...times)).toBeLessThan(1_500);
    // Every entry recorded while NATS was down is dropped and counted (after the publish timeout).
    await until('the entries recorded without NATS counted as dropped', async () => (await gatewayDrops()) >= 40, 20_000);

    await nats().up();
    await until(
      'logging resumes once NATS is back',
      async () => {
        await stack.api('GET', '/v1/health', { token, headers: { 'x-request-id': 'after' } });
        return logged('after');
      },
      30_000,
    );
    // What was dropped stays missing (by design), and only that.
    expect(await logged('down-0')).toBe(false);
  }, 120_000);
});
