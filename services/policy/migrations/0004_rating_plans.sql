-- Rating plans (API.md "Rating plan"; `npm run -s admin -- product rating set --id P FILE.json`):
-- every version of a product's plan is kept, so a quote's ratingVersion always names the plan that
-- priced it. products.rating_version is the current one (0: the product has no plan, and cannot be
-- quoted); a change bumps it and inserts that version in one statement (services/policy/src/rating/repository.ts).
ALTER TABLE products ADD COLUMN rating_version bigint NOT NULL DEFAULT 0;

CREATE TABLE rating_plans (
  product_id uuid NOT NULL REFERENCES products (product_id),
  rating_version bigint NOT NULL CHECK (rating_version >= 1),
  -- The plan as parseRatingPlan returned it (services/policy/src/rating/index.ts RatingPlan).
  plan jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  PRIMARY KEY (product_id, rating_version)
);
