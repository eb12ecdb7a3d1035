import { describe, expect, it, vi } from 'vitest';
import { cachedResolver } from './guard.js';

describe('cachedResolver', () => {
  it('looks a principal up once, then answers from the cache at once (not as a promise)', async () => {
    const lookup = vi.fn(async (_t: string, partnerId: string, principalId: string) => partnerId === 'p' && principalId === 'broker-1');
    const resolve = cachedResolver(lookup, 60_000);
    await expect(resolve('t', 'p', 'broker-1', 1_000)).resolves.toBe(true);
    expect(resolve('t', 'p', 'broker-1', 1_000)).toBe(true);
    await expect(resolve('t', 'p', 'nobody', 1_000)).resolves.toBe(false);
    expect(resolve('t', 'p', 'nobody', 1_000)).toBe(false);
    // Keyed by tenant and partner too.
    await expect(resolve('t', 'other', 'broker-1', 1_000)).resolves.toBe(false);
    expect(lookup).toHaveBeenCalledTimes(3);
  });

  it('asks again once an answer expires: a negative one after a fifth of the time', async () => {
    vi.useFakeTimers();
    try {
      const lookup = vi.fn(async (_t: string, _p: string, principalId: string) => principalId === 'broker-1');
      const resolve = cachedResolver(lookup, 10_000);
      await resolve('t', 'p', 'broker-1', 1_000);
      await resolve('t', 'p', 'nobody', 1_000);
      vi.advanceTimersByTime(2_001);
      expect(resolve('t', 'p', 'broker-1', 1_000)).toBe(true);
      await expect(resolve('t', 'p', 'nobody', 1_000)).resolves.toBe(false);
      expect(lookup).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
