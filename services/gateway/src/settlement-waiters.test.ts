import { describe, expect, it } from 'vitest';
import { createLogger } from '@partner/shared/telemetry/logger';
import type { FeedWake } from '@partner/shared/domain/events';
import { feedKey, SettlementWaiters, type Waiter } from './settlement-waiters.js';
import { fakeNats } from './settlement-waiters.test-helper.js';

const logger = createLogger('test', 'silent');
/** Registers for one partner and expects a wait (not a refusal). */
function hold(w: SettlementWaiters, id: string, ms: number, holder = 't\u0000p'): Waiter {
  const r = w.register(id, ms, holder);
  if ('reason' in r) throw new Error(`refused: ${r.reason}`);
  return r;
}
const job = (id: string) => ({ id, kind: 'submission.create', status: 'succeeded' as const, result: {}, createdAt: 'c', updatedAt: 'u' });

describe('SettlementWaiters', () => {
  it('wakes every waiter of a job with the settled job, and only them', async () => {
    const w = new SettlementWaiters(10, logger);
    const publish = fakeNats(w);
    const a = hold(w, 'job_a', 10_000);
    const b = hold(w, 'job_a', 10_000);
    const other = hold(w, 'job_b', 50);
    expect(w.size).toBe(3);
    publish(JSON.stringify({ job: job('job_a'), tenantId: 't', partnerId: 'p' }));
    await expect(a.settled).resolves.toMatchObject({ id: 'job_a', status: 'succeeded' });
    await expect(b.settled).resolves.toMatchObject({ id: 'job_a' });
    await expect(other.settled).resolves.toBeUndefined();
    expect(w.size).toBe(0);
  });

  it('resolves undefined at the deadline and on cancel, and ignores garbage events', async () => {
    const w = new SettlementWaiters(10, logger);
    const publish = fakeNats(w);
    const timed = hold(w, 'job_x', 20);
    const cancelled = hold(w, 'job_y', 10_000);
    publish('not json');
    cancelled.cancel();
    await expect(cancelled.settled).resolves.toBeUndefined();
    await expect(timed.settled).resolves.toBeUndefined();
    expect(w.size).toBe(0);
  });

  it('refuses new waiters beyond its cap', () => {
    const w = new SettlementWaiters(2, logger);
    hold(w, 'job_1', 1000, 'a');
    hold(w, 'job_2', 1000, 'b');
    expect(w.register('job_3', 1000, 'c')).toEqual({ reason: 'process_cap' });
    w.cancelAll();
  });

  it('refuses a partner beyond its share, with the seconds until its first wait ends, and counts partners at their cap', () => {
    let atCap = 0;
    let capped = 0;
    const w = new SettlementWaiters(100, logger, { waiting: () => undefined, outcome: () => undefined, holderCapped: () => capped++, holdersAtCap: (d) => (atCap += d) }, 2);
    const first = hold(w, 'job_1', 3_500, 'noisy');
    hold(w, 'job_2', 20_000, 'noisy');
    expect(atCap).toBe(1);
    expect(w.register('job_3', 1000, 'noisy')).toEqual({ reason: 'holder_cap', retryAfterS: 4 });
    expect(capped).toBe(1);
    // Another partner is not held back by the noisy one.
    hold(w, 'job_4', 1000, 'quiet');
    // A wait that ends frees the slot.
    first.cancel();
    expect(atCap).toBe(0);
    hold(w, 'job_5', 1000, 'noisy');
    expect(atCap).toBe(1);
    w.cancelAll();
    expect(atCap).toBe(0);
    expect(w.size).toBe(0);
  });
});

describe('feed wake-ups', () => {
  /** Attaches the feed subscription to a stand-in; returns a function that delivers a wake-up as NATS would. */
  function fakeFeed(w: SettlementWaiters): (wake: unknown) => void {
    let deliver: (data: string) => void = () => undefined;
    w.attachFeed(
      {
        subscribe: (_subject: string, opts: { callback: (err: Error | null, msg: { string(): string }) => void }) => {
          deliver = (data) => opts.callback(null, { string: () => data });
          return { unsubscribe: () => undefined };
        },
      } as never,
      'subject',
    );
    return (wake) => deliver(JSON.stringify(wake));
  }
  const owner = { tenantId: 't', partnerId: 'p' };

  it("wakes the partner's feed readers with the wake-up itself; one a reader's accept declines leaves it waiting", async () => {
    const w = new SettlementWaiters(10, logger);
    const publish = fakeFeed(w);
    const seen: string[] = [];
    const plain = w.register<FeedWake>(feedKey(owner), 10_000, 't\u0000p');
    const picky = w.register<FeedWake>(feedKey(owner), 10_000, 't\u0000p', (wake) => (seen.push(wake.seq), wake.seq === '2'));
    const other = w.register<FeedWake>(feedKey({ tenantId: 't', partnerId: 'q' }), 50, 't\u0000q');
    if ('reason' in plain || 'reason' in picky || 'reason' in other) throw new Error('refused');
    publish({ ...owner, seq: '1' });
    await expect(plain.settled).resolves.toEqual({ ...owner, seq: '1' });
    expect(w.size).toBe(2);
    publish({ ...owner, seq: '2', after: 'c1', events: [] });
    await expect(picky.settled).resolves.toEqual({ ...owner, seq: '2', after: 'c1', events: [] });
    expect(seen).toEqual(['1', '2']);
    await expect(other.settled).resolves.toBeUndefined();
    expect(w.size).toBe(0);
  });
});

describe('shutdown', () => {
  it('ends every wait at once', async () => {
    const w = new SettlementWaiters(10, logger);
    const a = hold(w, 'job_a', 60_000);
    const b = hold(w, 'job_b', 60_000);
    w.cancelAll();
    await expect(Promise.all([a.settled, b.settled])).resolves.toEqual([undefined, undefined]);
    expect(w.size).toBe(0);
  });
});
