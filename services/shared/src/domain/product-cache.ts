// Products as the gateway (POST /v1/submissions/validate) and the worker (the create job) see them:
// lookups to the policy service, cached briefly, each with its requirements and their version. A
// product whose requirements change is dropped at once when the admin command announces it on core
// NATS (productChangedSubject), so a job that runs after the change is judged by the new version;
// without NATS, a change is seen within the TTL. Unknown products are cached for a fifth of it.
import type { NatsConnection, Subscription } from 'nats';
import { DomainError } from './errors.js';
import { requirementsFromJson } from './requirements.js';
import type { ProductRules } from './submission-rules.js';

interface ProductMessage {
  productId: string;
  active: boolean;
  requirementsVersion?: number | string | { toString(): string } | null;
  requirementsJson?: string;
}

type GetProduct = (req: { productId: string }) => Promise<{ product?: ProductMessage | null }>;

export type ProductLookup = ((productId: string) => Promise<ProductRules | undefined>) & {
  /** Forgets one product (its requirements changed). */
  invalidate(productId: string): void;
  /** Listens on the subject where changes are announced; returns the subscription. */
  attach(nc: NatsConnection, subject: string): Subscription;
};

export function rulesOf(p: ProductMessage): ProductRules {
  return { productId: p.productId, active: p.active, requirementsVersion: Number(p.requirementsVersion?.toString() ?? 0), requirements: requirementsFromJson(p.requirementsJson) };
}

export function cachedProductRules(policy: { GetProduct: GetProduct }, ttlMs: number, maxEntries = 10_000): ProductLookup {
  const cache = new Map<string, { value: ProductRules | undefined; until: number }>();
  const inflight = new Map<string, Promise<ProductRules | undefined>>();
  // Bumped by every invalidation: a lookup that started before it does not cache its (maybe stale) answer.
  let generation = 0;
  const lookup = (async (productId: string) => {
    const hit = cache.get(productId);
    if (hit && hit.until > Date.now()) return hit.value;
    let pending = inflight.get(productId);
    if (!pending) {
      const started = generation;
      pending = policy
        .GetProduct({ productId })
        .then(
          (r) => (r.product ? rulesOf(r.product) : undefined),
          (err: unknown) => {
            if (err instanceof DomainError && err.code === 'not_found') return undefined;
            throw err;
          },
        )
        .then((value) => {
          if (started === generation) {
            if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
            cache.set(productId, { value, until: Date.now() + (value ? ttlMs : ttlMs / 5) });
          }
          return value;
        })
        .finally(() => inflight.delete(productId));
      inflight.set(productId, pending);
    }
    return pending;
  }) as ProductLookup;
  lookup.invalidate = (productId) => {
    generation += 1;
    cache.delete(productId);
    inflight.delete(productId);
  };
  lookup.attach = (nc, subject) =>
    nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        try {
          const { productId } = msg.json<{ productId?: unknown }>();
          if (typeof productId === 'string') lookup.invalidate(productId);
        } catch {
          // Not ours: ignore.
        }
      },
    });
  return lookup;
}
