import { describe, expect, it } from 'vitest';
import { TokenBuckets } from './rate-limit.js';

describe('TokenBuckets', () => {
  it('allows a burst, then refills at the sustained rate', () => {
    const b = new TokenBuckets();
    const limit = { rps: 2, burst: 3 };
    const t0 = 1_000_000;
    expect([1, 2, 3].map(() => b.take('c', limit, t0).allowed)).toEqual([true, true, true]);
    const refused = b.take('c', limit, t0);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterS: 1 });
    expect(b.take('c', limit, t0 + 499).allowed).toBe(false);
    expect(b.take('c', limit, t0 + 1000).allowed).toBe(true);
    // Other clients have their own buckets.
    expect(b.take('other', limit, t0).allowed).toBe(true);
  });

  it('reports remaining tokens and the seconds until the bucket is full', () => {
    const b = new TokenBuckets();
    const r = b.take('c', { rps: 10, burst: 100 }, 0);
    expect(r).toMatchObject({ allowed: true, remaining: 99, resetS: 1 });
  });

  it('starts afresh when the client gets a new limit', () => {
    const b = new TokenBuckets();
    b.take('c', { rps: 1, burst: 1 }, 0);
    expect(b.take('c', { rps: 1, burst: 1 }, 0).allowed).toBe(false);
    expect(b.take('c', { rps: 5, burst: 5 }, 0).allowed).toBe(true);
  });
});
