// Rating plans in the policy service's database (migrations/0004_rating_plans.sql): every version of a
// product's plan is kept, products.rating_version names the current one; a quote names the version it
// was rated with.
import { prepared, type Pool, type PoolClient } from '@partner/shared/db/pg';
import type { RatingPlan } from '@partner/shared/domain/rating';

/** A pool, or a client inside a transaction. */
export type Queryable = Pool | PoolClient;

/**
 * Stores `plan` (already checked with parseRatingPlan) as the product's next version and returns that
 * ratingVersion (1 for the first plan, then +1 per change); undefined for an unknown product. One
 * statement: the version bump (which waits on a concurrent change's row lock and then sees its
 * result) and the insert happen together or not at all.
 */
export async function setRatingPlan(db: Queryable, productId: string, plan: RatingPlan): Promise<number | undefined> {
  const r = await db.query<{ rating_version: string }>(
    `WITH v AS (UPDATE products SET rating_version = rating_version + 1 WHERE product_id = $1 RETURNING product_id, rating_version)
     INSERT INTO rating_plans (product_id, rating_version, plan) SELECT product_id, rating_version, $2::jsonb FROM v
     RETURNING rating_version`,
    [productId, JSON.stringify(plan)],
  );
  const row = r.rows[0];
  return row ? Number(row.rating_version) : undefined;
}

/** The product's current plan and its version; null when the product has none (422 product_not_rated) or is unknown. */
export async function currentRatingPlan(db: Queryable, productId: string): Promise<{ plan: RatingPlan; ratingVersion: number } | null> {
  const r = await db.query<{ plan: RatingPlan; rating_version: string }>(
    prepared(
      `SELECT r.plan, r.rating_version FROM products p
         JOIN rating_plans r ON r.product_id = p.product_id AND r.rating_version = p.rating_version
        WHERE p.product_id = $1`,
      [productId],
    ),
  );
  const row = r.rows[0];
  return row ? { plan: row.plan, ratingVersion: Number(row.rating_version) } : null;
}
