import { describe, expect, it } from 'vitest';
import { ClientStates, type ClientState } from './client-state.js';

const state = (over: Partial<ClientState> = {}): ClientState => ({ disabled: false, tokenVersion: 0, permissions: new Set(['health/read']), rateLimit: undefined, ...over });

describe('ClientStates', () => {
  it('answers from the cache without a read until the entry expires (short while no push is live)', async () => {
    let reads = 0;
    let clock = 1_000_000;
    const states = new ClientStates(async () => (reads++, state()), { ttlMs: 60_000, unpushedTtlMs: 2_000, now: () => clock });
    expect(states.get('c')).toBeUndefined();
    await states.load('c', 100);
    expect(states.get('c')).toBeDefined();
    clock += 1_999;
    expect(states.get('c')).toBeDefined();
    // Not pushed (no NATS subscription): an entry lasts unpushedTtlMs, not ttlMs.
    clock += 2;
    expect(states.get('c')).toBeUndefined();
    expect(reads).toBe(1);
  });

  it('reads once for concurrent cold requests', async () => {
    let reads = 0;
    const states = new ClientStates(async () => (reads++, state()), { ttlMs: 60_000, unpushedTtlMs: 2_000 });
    await Promise.all([states.load('c', 100), states.load('c', 100), states.load('c', 100)]);
    expect(reads).toBe(1);
  });

  it('drops an entry on invalidation, and never caches a read that started before one', async () => {
    let release: (s: ClientState) => void = () => undefined;
    const states = new ClientStates(() => new Promise<ClientState>((r) => (release = r)), { ttlMs: 60_000, unpushedTtlMs: 60_000 });
    const stale = states.load('c', 100);
    states.invalidate('c'); // the change is announced while the read is in flight
    release(state({ disabled: false }));
    await stale;
    expect(states.get('c')).toBeUndefined();
    const fresh = states.load('c', 100);
    release(state({ disabled: true }));
    expect((await fresh).disabled).toBe(true);
    expect(states.get('c')?.disabled).toBe(true);
    states.invalidate('c');
    expect(states.get('c')).toBeUndefined();
  });

  it('does not cache a failed read', async () => {
    let fail = true;
    const states = new ClientStates(async () => {
      if (fail) throw new Error('auth down');
      return state();
    }, { ttlMs: 60_000, unpushedTtlMs: 60_000 });
    await expect(states.load('c', 100)).rejects.toThrow('auth down');
    fail = false;
    await expect(states.load('c', 100)).resolves.toBeDefined();
  });
});
