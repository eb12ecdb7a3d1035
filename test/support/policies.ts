// Helpers for the policy system tests: seeding many policies straight into the policy schema
// (one INSERT ... SELECT generate_series), JSONL files for `policy import`, and walking the list.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { ApiResponse, Stack } from './stack.js';

export interface Owner {
  tenant: string;
  partnerId: string;
}

/** A client on the test database with search_path = policy. Close it with end(). */
export async function policyDb(stack: Stack): Promise<pg.Client> {
  const db = new pg.Client({ connectionString: stack.env.DATABASE_URL, options: '-c search_path=policy' });
  await db.connect();
  return db;
}

/**
 * Inserts `count` policies for the owner: numbers `${prefix}-00001`..., created one second apart in
 * groups of three (so ties on created_at are common and the policy_id tie-break matters), statuses
 * mostly active with every 50th pending, every 10th cancelled and every 7th expired; every 5th
 * of products[1] (else products[0]); updated_at a few hours after created_at.
 */
export async function seedPolicies(
  db: pg.Client,
  owner: Owner,
  opts: { count: number; prefix: string; products: [string, string]; createdFrom?: string },
): Promise<void> {
  await db.query(
    `INSERT INTO policies (policy_id, tenant_id, partner_id, policy_number, status, product_id, insured_legal_name,
                           effective_date, expiration_date, premium_amount, premium_currency, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2, $3 || '-' || lpad(i::text, 5, '0'),
            CASE WHEN i % 50 = 0 THEN 'pending' WHEN i % 10 = 0 THEN 'cancelled' WHEN i % 7 = 0 THEN 'expired' ELSE 'active' END,
            CASE WHEN i % 5 = 0 THEN $5::uuid ELSE $4::uuid END,
            'Insured ' || i, DATE '2025-01-01' + (i % 365), DATE '2026-01-01' + (i % 365),
            (i * 10)::numeric + 0.50, 'EUR',
            $6::timestamptz + (i / 3) * interval '1 second',
            $6::timestamptz + (i / 3) * interval '1 second' + (i % 24) * interval '1 hour'
       FROM generate_series(1, $7::int) AS i`,
    [owner.tenant, owner.partnerId, opts.prefix, opts.products[0], opts.products[1], opts.createdFrom ?? '2025-06-01T00:00:00Z', opts.count],
  );
  await db.query('ANALYZE policies');
}

/** One line of a `policy import` file; fields can be overridden (undefined removes one). */
export function policyLine(policyNumber: string, productId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    policyNumber,
    status: 'active',
    productId,
    insured: { legalName: `Insured of ${policyNumber}` },
    effectiveDate: '2025-01-01',
    expirationDate: '2026-01-01',
    premium: { amount: '100.00', currency: 'EUR' },
    ...overrides,
  };
  for (const [k, v] of Object.entries(doc)) if (v === undefined) delete doc[k];
  return doc;
}

const dir = mkdtempSync(join(tmpdir(), 'policy-import-'));
let files = 0;

/** Writes lines (objects become JSON, strings are written as they are) to a new .jsonl file. */
export function jsonlFile(lines: (Record<string, unknown> | string)[]): string {
  const path = join(dir, `import-${++files}.jsonl`);
  writeFileSync(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return path;
}

/** Lists with the query (plus limit), following nextCursor to the end. */
export async function listAll(
  stack: Stack,
  token: string,
  query: Record<string, string> = {},
  opts: { limit?: number; onPage?: (page: number, res: ApiResponse) => Promise<void> } = {},
): Promise<{ items: any[]; pages: number }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const items: any[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  let cursor: string | null = null;
  let pages = 0;
  do {
    const params = new URLSearchParams(query);
    if (opts.limit !== undefined) params.set('limit', String(opts.limit));
    if (cursor) params.set('cursor', cursor);
    const res = await stack.api('GET', `/v1/policies?${params}`, { token });
    if (res.status !== 200) throw new Error(`page ${pages + 1}: ${res.status} ${res.text}`);
    pages++;
    items.push(...res.body.items);
    cursor = res.body.nextCursor;
    await opts.onPage?.(pages, res);
    if (pages > 5000) throw new Error('paging does not end');
  } while (cursor);
  return { items, pages };
}
