// The product catalogue: products a submission may name, and their versioned requirements. Unknown
// or inactive products fail the submission's job with unknown_product; requirements are judged by
// services/shared/src/domain/submission-rules.ts.
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';
import { prepared, withTx, type Pool } from '@partner/shared/db/pg';
import { bindingOf, CursorCodec } from '@partner/shared/domain/list-cursor';
import { EVERY_PARTNER } from '@partner/shared/domain/events';
import { recordEvent, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import type { Requirements } from '@partner/shared/domain/requirements';
import type { Product } from '@partner/shared/generated/partner/policy/v1/Product';
import type { ListProductsRequest__Output } from '@partner/shared/generated/partner/policy/v1/ListProductsRequest';

export interface ProductRow {
  product_id: string;
  name: string;
  active: boolean;
  requirements: Requirements;
  requirements_version: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'product_id, name, active, requirements, requirements_version, created_at, updated_at';

export async function getProduct(pool: Pool, productId: string): Promise<ProductRow | undefined> {
  const r = await pool.query<ProductRow>(prepared(`SELECT ${COLUMNS} FROM products WHERE product_id = $1`, [productId]));
  return r.rows[0];
}

export function productToProto(row: ProductRow): Product {
  return {
    productId: row.product_id,
    name: row.name,
    active: row.active,
    requirementsVersion: row.requirements_version,
    requirementsJson: JSON.stringify(row.requirements),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The product as the API (and product.requirements_changed) shows it. */
export function productRecord(row: ProductRow): Record<string, unknown> {
  return {
    productId: row.product_id,
    name: row.name,
    active: row.active,
    requirementsVersion: Number(row.requirements_version),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Adds a product or updates its name/active flag; `created` tells which. */
export async function upsertProduct(
  pool: Pool,
  p: { productId: string; name: string; active: boolean },
): Promise<ProductRow & { created: boolean }> {
  const r = await pool.query<ProductRow & { created: boolean }>(
    `INSERT INTO products (product_id, name, active) VALUES ($1, $2, $3)
     ON CONFLICT (product_id) DO UPDATE SET name = EXCLUDED.name, active = EXCLUDED.active, updated_at = date_trunc('milliseconds', now())
     RETURNING ${COLUMNS}, (xmax = 0) AS created`,
    [p.productId, p.name, p.active],
  );
  return r.rows[0]!;
}


/**
 * Replaces a product's requirements, bumps its version and records product.requirements_changed
 * (data: the product) in the same transaction: all of it or nothing. Undefined for an unknown product.
 */
export async function setRequirements(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  productId: string,
  requirements: Requirements,
): Promise<{ row: ProductRow; event: RecordedEvent } | undefined> {
  return withTx(pool, async (c) => {
    const r = await c.query<ProductRow>(
      `UPDATE products SET requirements = $2::jsonb, requirements_version = requirements_version + 1, updated_at = date_trunc('milliseconds', now())
        WHERE product_id = $1 RETURNING ${COLUMNS}`,
      [productId, JSON.stringify(requirements)],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    const event = await recordEvent(c, names, EVERY_PARTNER, 'product.requirements_changed', row.updated_at.toISOString(), productRecord(row));
    return { row, event };
  });
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
/** Products are the same for everyone: cursors bind to no owner, only to the filter. */
const CATALOGUE = { tenantId: '*', partnerId: '*' };

export interface ListProductsArgs {
  limit: number;
  active?: boolean;
  after?: { createdAtMs: number; id: string };
}

export function parseListProducts(req: ListProductsRequest__Output, codec: CursorCodec): ListProductsArgs {
  const details: ErrorDetail[] = [];
  const args: ListProductsArgs = { limit: DEFAULT_LIMIT };
  if (req.pageSize !== 0) {
    if (Number.isInteger(req.pageSize) && req.pageSize >= 1 && req.pageSize <= MAX_LIMIT) args.limit = req.pageSize;
    else details.push({ field: 'limit', issue: `must be an integer from 1 to ${MAX_LIMIT}` });
  }
  if (req.active !== '') {
    if (req.active === 'true' || req.active === 'false') args.active = req.active === 'true';
    else details.push({ field: 'active', issue: 'must be true or false' });
  }
  if (details.every((d) => d.field === 'limit') && req.pageToken !== '') {
    const after = codec.decode(req.pageToken, bindingOf(CATALOGUE, [req.active || undefined]));
    if (after) args.after = after;
    else details.push({ field: 'cursor', issue: 'is not a cursor of this listing: pass nextCursor unchanged, with the same filters' });
  }
  if (details.length > 0) throw new DomainError('validation_error', 'invalid list parameters', { details });
  return args;
}

export async function listProducts(pool: Pool, args: ListProductsArgs, codec: CursorCodec): Promise<{ rows: ProductRow[]; nextCursor: string }> {
  const values: unknown[] = [];
  const where: string[] = [];
  if (args.active !== undefined) {
    values.push(args.active);
    where.push(`active = $${values.length}`);
  }
  if (args.after) {
    values.push(new Date(args.after.createdAtMs).toISOString(), args.after.id);
    where.push(`(created_at, product_id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
  }
  values.push(args.limit + 1);
  const text = `SELECT ${COLUMNS} FROM products ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
                ORDER BY created_at DESC, product_id DESC LIMIT $${values.length}`;
  const { rows } = await pool.query<ProductRow>(prepared(text, values));
  if (rows.length <= args.limit) return { rows, nextCursor: '' };
  const page = rows.slice(0, args.limit);
  const last = page[page.length - 1]!;
  const filter = args.active === undefined ? undefined : String(args.active);
  return { rows: page, nextCursor: codec.encode({ createdAtMs: last.created_at.getTime(), id: last.product_id }, bindingOf(CATALOGUE, [filter])) };
}
