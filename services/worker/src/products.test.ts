import { describe, expect, it } from 'vitest';
import { DomainError } from '@partner/shared/domain/errors';
import { cachedProducts } from './products.js';

function fakePolicy(answers: Record<string, boolean | 'down'>) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    GetProduct: async ({ productId }: { productId: string }) => {
      calls++;
      const a = answers[productId];
      if (a === 'down') throw new DomainError('unavailable', 'down');
      if (a === undefined) throw new DomainError('not_found', 'product not found');
      return { product: { productId, name: 'p', active: a, requirementsVersion: '1', requirementsJson: '' } };
    },
  };
}

describe('cachedProducts', () => {
  it('asks once for concurrent and repeated lookups within the TTL', async () => {
    const policy = fakePolicy({ a: true, b: false });
    const lookup = cachedProducts(policy as never, 60_000);
    const results = await Promise.all([lookup('a'), lookup('a'), lookup('b'), lookup('missing')]);
    expect(results.map((r) => r?.active)).toEqual([true, true, false, undefined]);
    await lookup('a');
    await lookup('missing');
    expect(policy.calls).toBe(3);
  });

  it('asks again once the TTL has passed, and never caches a failure', async () => {
    const policy = fakePolicy({ a: true, down: 'down' });
    const lookup = cachedProducts(policy as never, 0);
    await lookup('a');
    await lookup('a');
    expect(policy.calls).toBe(2);
    await expect(lookup('down')).rejects.toMatchObject({ code: 'unavailable' });
    await expect(lookup('down')).rejects.toMatchObject({ code: 'unavailable' });
    expect(policy.calls).toBe(4);
  });

  it('forgets a product whose requirements changed: the next lookup asks again', async () => {
    const policy = fakePolicy({ a: true });
    const lookup = cachedProducts(policy as never, 60_000);
    await lookup('a');
    await lookup('a');
    lookup.invalidate('a');
    await lookup('a');
    expect(policy.calls).toBe(2);
  });
});
