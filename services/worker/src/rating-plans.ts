// Rating plans as the worker keeps them (quote.create): a product's current plan is read from the
// policy service (GetRatingPlan) once, then kept, so a quote job rates its options with no round trip
// of its own. A plan never changes in place: `product rating set` stores a new version. CreateQuotes
// writes only quotes rated with the product's current version and refuses the others
// (rating_plan_changed, nothing written); the handler then forgets the plan it used, reads the current
// one and rates again. So a kept plan may be out of date, but no quote rated with it is ever stored.
import { productNotRated, type CurrentRatingPlan, type RatingPlan } from '@partner/shared/domain/rating';

interface GetRatingPlan {
  GetRatingPlan(req: { productId: string }): Promise<{ ratingVersion: string | number | { toString(): string }; planJson: string }>;
}

export type RatingPlanLookup = ((productId: string) => Promise<CurrentRatingPlan>) & {
  /** Forgets a product's plan of that version (CreateQuotes refused it); a newer one read meanwhile stays. */
  forget(productId: string, ratingVersion: number): void;
};

/** Plans kept: one per product (a few KiB each, bounded by the plan limits), the oldest read first out. */
export const RATING_PLANS_KEPT = 1_000;

export function cachedRatingPlans(policy: GetRatingPlan, maxEntries = RATING_PLANS_KEPT): RatingPlanLookup {
  const kept = new Map<string, CurrentRatingPlan>();
  const inflight = new Map<string, Promise<CurrentRatingPlan>>();
  const lookup = (async (productId: string) => {
    const hit = kept.get(productId);
    if (hit) return hit;
    let pending = inflight.get(productId);
    if (!pending) {
      pending = policy
        .GetRatingPlan({ productId })
        .then((r) => {
          const ratingVersion = Number(r.ratingVersion.toString());
          // Version 0 is "no plan"; the service refuses that itself (product_not_rated), but never keep it.
          if (!(ratingVersion >= 1)) throw productNotRated(productId);
          const current = { plan: JSON.parse(r.planJson) as RatingPlan, ratingVersion };
          if (kept.size >= maxEntries) kept.delete(kept.keys().next().value as string);
          kept.set(productId, current);
          return current;
        })
        .finally(() => inflight.delete(productId));
      inflight.set(productId, pending);
    }
    return pending;
  }) as RatingPlanLookup;
  lookup.forget = (productId, ratingVersion) => {
    if (kept.get(productId)?.ratingVersion === ratingVersion) kept.delete(productId);
  };
  return lookup;
}
