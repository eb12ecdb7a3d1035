-- Policy service: the product catalogue, provisioned by operators (`npm run -s admin -- product add`).
CREATE TABLE products (
  product_id  uuid PRIMARY KEY,
  name        text NOT NULL,
  active      boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
