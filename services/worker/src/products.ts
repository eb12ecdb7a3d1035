// The product catalogue as the worker sees it: lookups to the policy service, cached briefly, with
// each product's requirements (services/shared/src/domain/product-cache.ts). The catalogue changes
// rarely and every submission job checks its product, so the cache takes a gRPC hop and a query off
// nearly every job (measured in docs/performance.md). A product deactivated or added is seen within
// the TTL; a change of its requirements at once (announced on NATS, productChangedSubject).
import type { PromiseClient, serviceDefs } from '@partner/shared/grpc';
import { cachedProductRules, type ProductLookup } from '@partner/shared/domain/product-cache';

type PolicyClient = PromiseClient<ReturnType<typeof serviceDefs>['policy']>;

export type { ProductLookup };
export type { ProductRules as ProductInfo } from '@partner/shared/domain/submission-rules';

export function cachedProducts(policy: Pick<PolicyClient, 'GetProduct'>, ttlMs: number, maxEntries = 10_000): ProductLookup {
  return cachedProductRules(policy as never, ttlMs, maxEntries);
}
