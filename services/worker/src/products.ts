// The product catalogue as the worker sees it: lookups to the policy service, cached briefly, with
// each product's requirements — the one cache the gateway uses too (shared/domain/product-cache.ts).
// The catalogue changes rarely and every submission job checks its product, so the cache takes a gRPC
// hop and a query off nearly every job (measured in docs/performance.md). A change made with the admin
// CLI (`product add`, `product requirements set`) is announced on NATS (productChangedSubject) and seen
// at once; without NATS, within the TTL.
export { cachedProductRules as cachedProducts, type ProductLookup } from '@partner/shared/domain/product-cache';
export type { ProductRules as ProductInfo } from '@partner/shared/domain/submission-rules';
