import { describe, expect, it } from 'vitest';
import { createLogger } from '@partner/shared/logger';
import { SettlementWaiters } from './waiters.js';
import { fakeNats } from './waiters.test-helper.js';

const logger = createLogger('test', 'silent');
const job = (id: string) => ({ id, kind: 'submission.create', status: 'succeeded' as const, result: {}, createdAt: 'c', updatedAt: 'u' });

describe('SettlementWaiters', () => {
  it('wakes every waiter of a job with the settled job, and only them', async () => {
    const w = new SettlementWaiters(10, logger);
    const publish = fakeNats(w);
    const a = w.register('job_a', 10_000)!;
    const b = w.register('job_a', 10_000)!;
    const other = w.register('job_b', 50)!;
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
    const timed = w.register('job_x', 20)!;
    const cancelled = w.register('job_y', 10_000)!;
    publish('not json');
    cancelled.cancel();
    await expect(cancelled.settled).resolves.toBeUndefined();
    await expect(timed.settled).resolves.toBeUndefined();
    expect(w.size).toBe(0);
  });

  it('refuses new waiters beyond its cap', () => {
    const w = new SettlementWaiters(2, logger);
    expect(w.register('job_1', 1000)).toBeDefined();
    expect(w.register('job_2', 1000)).toBeDefined();
    expect(w.register('job_3', 1000)).toBeUndefined();
  });
});

describe('shutdown', () => {
  it('ends every wait at once', async () => {
    const w = new SettlementWaiters(10, logger);
    const a = w.register('job_a', 60_000)!;
    const b = w.register('job_b', 60_000)!;
    w.cancelAll();
    await expect(Promise.all([a.settled, b.settled])).resolves.toEqual([undefined, undefined]);
    expect(w.size).toBe(0);
  });
});
