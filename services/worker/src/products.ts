// The product catalogue as the worker sees it: lookups to the policy service, cached briefly. The
// catalogue changes rarely and every submission job checks its product, so the cache takes a gRPC
// hop and a query off nearly every job (measured in docs/performance.md). A product deactivated or
// added is seen within the TTL (unknown products are cached for a fifth of it).
import { DomainError } from '@partner/shared/domain/errors';
import type { PromiseClient, serviceDefs } from '@partner/shared/grpc';

type PolicyClient = PromiseClient<ReturnType<typeof serviceDefs>['policy']>;

export interface ProductInfo {
  active: boolean;
}

export type ProductLookup = (productId: string) => Promise<ProductInfo | undefined>;

export function cachedProducts(policy: Pick<PolicyClient, 'GetProduct'>, ttlMs: number, maxEntries = 10_000): ProductLookup {
  const cache = new Map<string, { value: ProductInfo | undefined; until: number }>();
  const inflight = new Map<string, Promise<ProductInfo | undefined>>();
  return async (productId) => {
    const hit = cache.get(productId);
    if (hit && hit.until > Date.now()) return hit.value;
    let pending = inflight.get(productId);
    if (!pending) {
      pending = policy
        .GetProduct({ productId })
        .then(
          (r) => (r.product ? { active: r.product.active } : undefined),
          (err: unknown) => {
            if (err instanceof DomainError && err.code === 'not_found') return undefined;
            throw err;
          },
        )
        .then((value) => {
          if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
          cache.set(productId, { value, until: Date.now() + (value ? ttlMs : ttlMs / 5) });
          return value;
        })
        .finally(() => inflight.delete(productId));
      inflight.set(productId, pending);
    }
    return pending;
  };
}
