// The product catalogue: products a submission may name. Unknown or inactive products fail the
// submission's job with unknown_product.
import { prepared, type Pool } from '@partner/shared/db/pg';

export interface ProductRow {
  product_id: string;
  name: string;
  active: boolean;
}

export async function getProduct(pool: Pool, productId: string): Promise<ProductRow | undefined> {
  const r = await pool.query<ProductRow>(prepared('SELECT product_id, name, active FROM products WHERE product_id = $1', [productId]));
  return r.rows[0];
}

/** Adds a product or updates its name/active flag; `created` tells which. */
export async function upsertProduct(
  pool: Pool,
  p: { productId: string; name: string; active: boolean },
): Promise<ProductRow & { created: boolean }> {
  const r = await pool.query<ProductRow & { created: boolean }>(
    `INSERT INTO products (product_id, name, active) VALUES ($1, $2, $3)
     ON CONFLICT (product_id) DO UPDATE SET name = EXCLUDED.name, active = EXCLUDED.active, updated_at = now()
     RETURNING product_id, name, active, (xmax = 0) AS created`,
    [p.productId, p.name, p.active],
  );
  return r.rows[0]!;
}
