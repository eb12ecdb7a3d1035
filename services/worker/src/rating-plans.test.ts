import { describe, expect, it } from 'vitest';
import { DomainError } from '@partner/shared/domain/errors';
import { cachedRatingPlans } from './rating-plans.js';

const PRODUCT = '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b';

/** A policy service whose current versions the test sets; counts its calls. */
function policy(versions: Record<string, number>) {
  const calls: string[] = [];
  return {
    calls,
    versions,
    GetRatingPlan: async ({ productId }: { productId: string }) => {
      calls.push(productId);
      await Promise.resolve();
      const v = versions[productId] ?? 0;
      if (v === 0) throw new DomainError('product_not_rated', `product ${productId} has no rating plan, so it cannot be quoted`);
      // int64 arrives as a string (the loader's `longs: String`).
      return { ratingVersion: String(v), planJson: JSON.stringify({ currency: 'USD', rate: `${v}` }) };
    },
  };
}

describe('cachedRatingPlans', () => {
  it('reads a product\'s plan once and keeps it; lookups meanwhile share the one call', async () => {
    const p = policy({ [PRODUCT]: 1 });
    const plans = cachedRatingPlans(p);
    const [x, y] = await Promise.all([plans(PRODUCT), plans(PRODUCT)]);
    expect(x).toEqual({ ratingVersion: 1, plan: { currency: 'USD', rate: '1' } });
    expect(y).toBe(x);
    expect(await plans(PRODUCT)).toBe(x);
    expect(p.calls).toHaveLength(1);
  });

  it('forgets the version the store refused, and reads the current one next', async () => {
    const p = policy({ [PRODUCT]: 1 });
    const plans = cachedRatingPlans(p);
    await plans(PRODUCT);
    p.versions[PRODUCT] = 2;
    // Still the kept one until forgotten: nothing announces a new plan.
    expect((await plans(PRODUCT)).ratingVersion).toBe(1);
    plans.forget(PRODUCT, 1);
    expect((await plans(PRODUCT)).ratingVersion).toBe(2);
    // A refusal of an older version (a job that rated before) leaves the newer one kept.
    plans.forget(PRODUCT, 1);
    expect((await plans(PRODUCT)).ratingVersion).toBe(2);
    expect(p.calls).toHaveLength(2);
  });

  it('keeps no refusal: a product rated later is quoted at once', async () => {
    const p = policy({});
    const plans = cachedRatingPlans(p);
    await expect(plans(PRODUCT)).rejects.toMatchObject({ code: 'product_not_rated' });
    p.versions[PRODUCT] = 1;
    expect((await plans(PRODUCT)).ratingVersion).toBe(1);
    expect(p.calls).toHaveLength(2);
  });

  it('keeps at most maxEntries plans, dropping the one read first', async () => {
    const ids = ['a', 'b', 'c'].map((c) => `${c}${PRODUCT.slice(1)}`);
    const p = policy(Object.fromEntries(ids.map((id) => [id, 1])));
    const plans = cachedRatingPlans(p, 2);
    for (const id of ids) await plans(id);
    await plans(ids[2]!);
    await plans(ids[1]!);
    expect(p.calls).toHaveLength(3);
    await plans(ids[0]!);
    expect(p.calls).toEqual([...ids, ids[0]]);
  });
});
