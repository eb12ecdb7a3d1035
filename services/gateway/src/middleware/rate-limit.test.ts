import { describe, expect, it } from 'vitest';
import { jsonBodyCost, TokenBuckets } from './rate-limit.js';

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

  it('keeps one bucket per client when its limit changes: switching limits never refills it', () => {
    const b = new TokenBuckets();
    const strict = { rps: 5, burst: 5 };
    const loose = { rps: 50, burst: 50 };
    let allowed = 0;
    // 300 requests in 300 ms, alternating two limits (two tokens of the same client): 5 burst plus
    // at most 50/s × 0.3 s of refill get through, not 300.
    for (let i = 0; i < 300; i++) if (b.take('c', i % 2 ? strict : loose, i).allowed) allowed++;
    expect(allowed).toBeLessThanOrEqual(5 + 15);
    // A lower limit caps what is left at once.
    const c = new TokenBuckets();
    c.take('c', loose, 0);
    expect(c.take('c', { rps: 1, burst: 1 }, 0).allowed).toBe(true);
    expect(c.take('c', { rps: 1, burst: 1 }, 0).allowed).toBe(false);
  });

  it('counts a JSON body as one request per 64 KiB begun, never more than the burst', () => {
    expect([0, 1, 65_536, 65_537, 1024 * 1024].map(jsonBodyCost)).toEqual([1, 1, 1, 2, 16]);
    const b = new TokenBuckets();
    const limit = { rps: 50, burst: 100 };
    // A burst of 1 MiB bodies: six pass (6 × 16 = 96), the seventh waits for its 16 tokens.
    const passed = Array.from({ length: 7 }, () => b.take('c', limit, 0, 16).allowed);
    expect(passed).toEqual([true, true, true, true, true, true, false]);
    expect(b.take('c', limit, 0, 16).retryAfterS).toBe(1);
    // A small request still passes on what is left.
    expect(b.take('c', limit, 0).allowed).toBe(true);
    // A cost above the burst is the burst: such a request passes once the bucket is full.
    const tiny = new TokenBuckets();
    expect(tiny.take('t', { rps: 1, burst: 5 }, 0, 17).allowed).toBe(true);
  });
});
