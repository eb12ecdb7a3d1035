// Rating plans in the policy service's database (migrations/0004_rating_plans.sql): every version of a
// product's plan is kept, the newest is the current one; a quote names the version it was rated with.
import type { Pool, PoolClient } from '@partner/shared/db/pg';
import type { RatingPlan } from './index.js';

/** A pool, or a client inside a transaction. */
export type Queryable = Pool | PoolClient;

/**
 * Stores `plan` (already checked with parseRatingPlan) as the product's next version and returns that
 * ratingVersion (1 for the first plan, then +1 per change); undefined for an unknown product.
 */
export async function setRatingPlan(db: Queryable, productId: string, plan: RatingPlan): Promise<number | undefined> {
  void db;
  void productId;
  void plan;
  throw new Error('not implemented');
}

/** The product's current plan and its version; null when the product has none (422 product_not_rated). */
export async function currentRatingPlan(db: Queryable, productId: string): Promise<{ plan: RatingPlan; ratingVersion: number } | null> {
  void db;
  void productId;
  throw new Error('not implemented');
}
