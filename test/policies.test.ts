// Policies through the whole system (HTTP → gateway → gRPC → policy service → PostgreSQL): keyset
// paging, filters, validation, partner and tenant isolation, and `policy import`.
import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { jsonlFile, listAll, policyDb, policyLine, seedPolicies } from './support/policies.js';
import { listQuery } from '../services/policy/src/policies.js';

const PRODUCT_1 = '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b';
const PRODUCT_2 = '0b9a8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let db: pg.Client;
// a and b: two partners of one tenant; c: a partner of another tenant with the SAME partner id as a.
let a: ClientCreds, b: ClientCreds, c: ClientCreds;
let ta: string, tb: string, tc: string;

const tenant1 = `t1-${Date.now().toString(36)}`;
const tenant2 = `t2-${Date.now().toString(36)}`;
const ownerOf = (x: ClientCreds) => ({ tenant: x.tenant, partnerId: x.partnerId });
const list = (token: string, query = '') => stack.api('GET', `/v1/policies${query}`, { token });
const count = async (sql: string, values: unknown[]) => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM policies WHERE ${sql}`, values)).rows[0]!.n);

const stack = useStack(async (stack) => {
  await stack.startAuth();
  await stack.startPolicy();
  await stack.startGateway();
  await stack.admin('product', 'add', '--id', PRODUCT_1, '--name', 'Demo commercial property');
  await stack.admin('product', 'add', '--id', PRODUCT_2, '--name', 'Second product');
  [a, b, c] = await Promise.all([
    stack.createClient({ tenant: tenant1, partner: 'partner-a' }),
    stack.createClient({ tenant: tenant1, partner: 'partner-b' }),
    stack.createClient({ tenant: tenant2, partner: 'partner-a' }),
  ]);
  [ta, tb, tc] = await Promise.all([stack.token(a), stack.token(b), stack.token(c)]);
  db = await policyDb(stack);
  await seedPolicies(db, ownerOf(a), { count: 1000, prefix: 'A', products: [PRODUCT_1, PRODUCT_2] });
  // Same policy numbers for the same partner id in another tenant: must never show up for a.
  await seedPolicies(db, ownerOf(c), { count: 20, prefix: 'A', products: [PRODUCT_1, PRODUCT_2] });
});

afterAll(async () => {
  await db?.end();
});

describe('GET /v1/policies paging', () => {
  it.each([[7], [50], [200], [undefined]])('returns each of 1,000 policies exactly once with limit %s, newest first', async (limit) => {
    const { items, pages } = await listAll(stack, ta, {}, limit === undefined ? {} : { limit });
    const size = limit ?? 50;
    expect(pages).toBe(Math.ceil(1000 / size));
    expect(items).toHaveLength(1000);
    const ids = items.map((p) => p.policyId);
    expect(new Set(ids).size).toBe(1000);
    const inDb = (await db.query<{ policy_id: string }>('SELECT policy_id FROM policies WHERE tenant_id = $1 AND partner_id = $2', [a.tenant, a.partnerId])).rows;
    expect(new Set(ids)).toEqual(new Set(inDb.map((r) => r.policy_id)));
    for (let i = 1; i < items.length; i++) {
      const [prev, cur] = [items[i - 1], items[i]];
      const ordered = prev.createdAt > cur.createdAt || (prev.createdAt === cur.createdAt && prev.policyId > cur.policyId);
      expect(ordered, `items ${i - 1} and ${i} out of order`).toBe(true);
    }
  });

  it('ends with nextCursor null on a full last page (no empty extra page)', async () => {
    const first = await list(ta, '?limit=200');
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(200);
    expect(typeof first.body.nextCursor).toBe('string');
    const all = await list(ta, '?limit=200&cursor=');
    expect(all.body.items.map((p: { policyId: string }) => p.policyId)).toEqual(first.body.items.map((p: { policyId: string }) => p.policyId));
    const { pages } = await listAll(stack, ta, {}, { limit: 200 });
    expect(pages).toBe(5);
  });

  it('returns every policy exactly once while policies are added and updated during the walk', async () => {
    const d = await stack.createClient({ tenant: tenant1, partner: 'partner-d' });
    const td = await stack.token(d);
    await seedPolicies(db, ownerOf(d), { count: 300, prefix: 'D', products: [PRODUCT_1, PRODUCT_2] });
    const before = new Set(
      (await db.query<{ policy_id: string }>('SELECT policy_id FROM policies WHERE partner_id = $1 AND tenant_id = $2', [d.partnerId, d.tenant])).rows.map(
        (r) => r.policy_id,
      ),
    );
    const { items } = await listAll(stack, td, {}, {
      limit: 40,
      onPage: async (page) => {
        if (page === 2) {
          // New policies (newest, and one "committed late" with an old created_at) and updates of
          // policies already seen and not yet seen.
          await stack.admin('policy', 'import', '--tenant', d.tenant, '--partner', d.partnerId,
            jsonlFile(Array.from({ length: 25 }, (_, i) => policyLine(`D-NEW-${i}`, PRODUCT_1))));
          await seedPolicies(db, ownerOf(d), { count: 3, prefix: 'D-LATE', products: [PRODUCT_1, PRODUCT_2], createdFrom: '2025-05-01T00:00:00Z' });
          await db.query(
            `UPDATE policies SET status = 'cancelled', updated_at = now()
              WHERE partner_id = $1 AND tenant_id = $2 AND policy_number IN ('D-00001', 'D-00150', 'D-00299', 'D-00300')`,
            [d.partnerId, d.tenant],
          );
          await stack.admin('policy', 'import', '--tenant', d.tenant, '--partner', d.partnerId,
            jsonlFile([policyLine('D-00002', PRODUCT_2, { status: 'expired' }), policyLine('D-00298', PRODUCT_2, { status: 'expired' })]));
        }
      },
    });
    const ids = items.map((p) => p.policyId);
    expect(new Set(ids).size, 'no policy repeated').toBe(ids.length);
    for (const id of before) expect(ids, `policy ${id} skipped`).toContain(id);
    expect(items.filter((p) => p.policyNumber.startsWith('D-NEW'))).toHaveLength(0);
  });
});

describe('GET /v1/policies filters', () => {
  it.each(['active', 'cancelled', 'expired', 'pending'])('status=%s', async (status) => {
    const { items } = await listAll(stack, ta, { status }, { limit: 100 });
    expect(items.length).toBe(await count('tenant_id = $1 AND partner_id = $2 AND status = $3', [a.tenant, a.partnerId, status]));
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((p) => p.status === status)).toBe(true);
  });

  it('productId (any case)', async () => {
    const { items } = await listAll(stack, ta, { productId: PRODUCT_2.toUpperCase() }, { limit: 60 });
    expect(items.length).toBe(200);
    expect(items.every((p) => p.productId === PRODUCT_2)).toBe(true);
  });

  it('policyNumber: the one policy, or none', async () => {
    const one = await list(ta, '?policyNumber=A-00042');
    expect(one.status).toBe(200);
    expect(one.body.items).toHaveLength(1);
    expect(one.body.items[0].policyNumber).toBe('A-00042');
    expect(one.body.nextCursor).toBeNull();
    const none = await list(ta, '?policyNumber=A-99999');
    expect(none.body).toEqual({ items: [], nextCursor: null });
  });

  it('updatedSince: at or after the instant, in any offset', async () => {
    const pivot = (await db.query<{ updated_at: Date }>(
      `SELECT updated_at FROM policies WHERE tenant_id = $1 AND partner_id = $2 ORDER BY updated_at DESC OFFSET 123 LIMIT 1`,
      [a.tenant, a.partnerId],
    )).rows[0]!.updated_at;
    const expected = await count('tenant_id = $1 AND partner_id = $2 AND updated_at >= $3', [a.tenant, a.partnerId, pivot]);
    const { items } = await listAll(stack, ta, { updatedSince: pivot.toISOString() }, { limit: 50 });
    expect(items.length).toBe(expected);
    expect(items.some((p) => p.updatedAt === pivot.toISOString())).toBe(true);
    expect(items.every((p) => p.updatedAt >= pivot.toISOString())).toBe(true);
    // The same instant written with an offset (and + encoded as %2B) selects the same policies.
    const shifted = new Date(pivot.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    const again = await listAll(stack, ta, { updatedSince: shifted }, { limit: 200 });
    expect(again.items.map((p) => p.policyId)).toEqual(items.map((p) => p.policyId));
    expect((await list(ta, '?updatedSince=2999-01-01T00:00:00Z')).body).toEqual({ items: [], nextCursor: null });
  });

  it('filters combine, and paging keeps them', async () => {
    const expected = await count('tenant_id = $1 AND partner_id = $2 AND status = $3 AND product_id = $4', [a.tenant, a.partnerId, 'active', PRODUCT_1]);
    const { items, pages } = await listAll(stack, ta, { status: 'active', productId: PRODUCT_1 }, { limit: 100 });
    expect(pages).toBeGreaterThan(1);
    expect(items.length).toBe(expected);
    expect(new Set(items.map((p) => p.policyId)).size).toBe(expected);
    expect(items.every((p) => p.status === 'active' && p.productId === PRODUCT_1)).toBe(true);
  });

  it('uses the owner indexes (EXPLAIN of the service query)', async () => {
    const plan = async (args: Parameters<typeof listQuery>[1]) => {
      const q = listQuery({ tenantId: a.tenant, partnerId: a.partnerId }, args);
      const r = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${q.text}`, q.values);
      return r.rows.map((row) => row['QUERY PLAN']).join('\n');
    };
    expect(await plan({ limit: 50 })).toMatch(/Index Scan Backward using policies_owner_created_idx/);
    expect(await plan({ limit: 50, after: { createdAtMs: Date.parse('2025-06-01T00:02:00Z'), policyId: '00000000-0000-4000-8000-000000000000' } })).toMatch(
      /Index Cond: .*ROW\(created_at, policy_id\) < ROW/,
    );
    expect(await plan({ limit: 50, status: 'pending' })).toMatch(/policies_owner_status_created_idx/);
    expect(await plan({ limit: 50, policyNumber: 'A-00001' })).toMatch(/policies_number_key/);
  });
});

describe('GET /v1/policies validation', () => {
  const expect400 = async (query: string, fields: string[], token = ta) => {
    const r = await list(token, query);
    expect(r.status, `${query}: ${r.text}`).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'validation_error', retryable: false });
    expect(r.body.error.details.map((d: { field: string }) => d.field).sort(), query).toEqual([...fields].sort());
    for (const d of r.body.error.details) expect(typeof d.issue).toBe('string');
  };

  it('limit outside 1..200 or not an integer', async () => {
    for (const v of ['0', '201', '-1', 'abc', '1.5', '', '1e2', '%2050', '00000000001', '99999999999999999999']) await expect400(`?limit=${v}`, ['limit']);
    expect((await list(ta, '?limit=1')).body.items).toHaveLength(1);
    expect((await list(ta, '?limit=200')).body.items).toHaveLength(200);
  });

  it('garbled, forged, truncated or re-filtered cursors', async () => {
    const page = await list(ta, '?limit=5');
    const cursor: string = page.body.nextCursor;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const bad of ['garbage', 'A'.repeat(55), flip(cursor, 0), flip(cursor, 20), flip(cursor, 54), cursor.slice(0, -1), `${cursor}A`, '%00', 'eyJpZCI6MX0']) {
      await expect400(`?cursor=${encodeURIComponent(bad)}`, ['cursor']);
    }
    // The cursor is only valid with the filters it was issued for.
    await expect400(`?cursor=${cursor}&status=active`, ['cursor']);
    const filtered = await list(ta, '?limit=5&status=active');
    await expect400(`?cursor=${filtered.body.nextCursor}`, ['cursor']);
    await expect400(`?cursor=${filtered.body.nextCursor}&status=expired`, ['cursor']);
    expect((await list(ta, `?cursor=${filtered.body.nextCursor}&status=active&limit=3`)).status).toBe(200);
    // limit may change from page to page.
    expect((await list(ta, `?cursor=${cursor}&limit=17`)).body.items).toHaveLength(17);
  });

  it('bad filter values', async () => {
    await expect400('?status=lapsed', ['status']);
    await expect400('?status=ACTIVE', ['status']);
    await expect400('?status=', ['status']);
    await expect400('?productId=123', ['productId']);
    await expect400(`?productId=${PRODUCT_1}x`, ['productId']);
    await expect400(`?policyNumber=${'x'.repeat(65)}`, ['policyNumber']);
    await expect400('?policyNumber=', ['policyNumber']);
    await expect400('?policyNumber=%20A-00001', ['policyNumber']);
    for (const t of ['2025-01-01', '2025-02-30T00:00:00Z', '2025-01-01T00:00:00', 'yesterday', '2025-01-01T00:00:00+02:00' /* + decodes to a space */, '1700000000']) {
      await expect400(`?updatedSince=${t}`, ['updatedSince']);
    }
  });

  it('unknown and repeated parameters, all reported at once', async () => {
    await expect400('?foo=1', ['foo']);
    await expect400('?offset=10', ['offset']);
    await expect400('?Limit=10', ['Limit']);
    await expect400('?limit=5&limit=6', ['limit']);
    await expect400('?status=active&status=pending', ['status']);
    await expect400('?limit=0&status=nope&productId=x&updatedSince=x&policyNumber=&foo=1', ['limit', 'status', 'productId', 'updatedSince', 'policyNumber', 'foo']);
    const r = await stack.api('GET', `/v1/policies/${PRODUCT_1}?expand=all`, { token: ta });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([{ field: 'expand', issue: 'is not a parameter of this operation' }]);
  });

  it('SQL-looking values are only values', async () => {
    for (const v of ["' OR '1'='1", "A-00001' OR 1=1 --", "x'; DROP TABLE policies; --", 'A-0000%', 'A-0000_', '\\']) {
      const r = await list(ta, `?policyNumber=${encodeURIComponent(v)}`);
      expect(r.status, v).toBe(200);
      expect(r.body).toEqual({ items: [], nextCursor: null });
    }
    await expect400(`?status=${encodeURIComponent("active' OR '1'='1")}`, ['status']);
    await expect400(`?productId=${encodeURIComponent(`${PRODUCT_1}' OR '1'='1`)}`, ['productId']);
    await expect400(`?updatedSince=${encodeURIComponent("2025-01-01T00:00:00Z' OR '1'='1")}`, ['updatedSince']);
    await expect400(`?limit=${encodeURIComponent('1; DROP TABLE policies')}`, ['limit']);
    await expect400(`?cursor=${encodeURIComponent("' OR 1=1 --")}`, ['cursor']);
    const byId = await stack.api('GET', `/v1/policies/${encodeURIComponent("1' OR '1'='1")}`, { token: ta });
    expect(byId.status).toBe(404);
    expect(await count('tenant_id = $1 AND partner_id = $2', [a.tenant, a.partnerId])).toBe(1000);
  });
});

describe('GET /v1/policies/{id}', () => {
  it('returns the record with decimal-string amounts, calendar dates and ISO timestamps', async () => {
    const row = (await db.query(`SELECT policy_id FROM policies WHERE tenant_id = $1 AND partner_id = $2 AND policy_number = 'A-00042'`, [a.tenant, a.partnerId])).rows[0];
    const r = await stack.api('GET', `/v1/policies/${row.policy_id}`, { token: ta });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      policyId: row.policy_id,
      policyNumber: 'A-00042',
      status: 'expired',
      productId: PRODUCT_1,
      insured: { legalName: 'Insured 42' },
      effectiveDate: '2025-02-12',
      expirationDate: '2026-02-12',
      premium: { amount: '420.50', currency: 'EUR' },
      createdAt: '2025-06-01T00:00:14.000Z',
      updatedAt: '2025-06-01T18:00:14.000Z',
    });
    expect(r.body.policyId).toMatch(UUID);
    expect((await stack.api('GET', `/v1/policies/${row.policy_id.toUpperCase()}`, { token: ta })).body.policyId).toBe(row.policy_id);
  });

  it('404 not_found for unknown and malformed ids', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope', '123', `${PRODUCT_1}0`, '%ZZ', '%00', encodeURIComponent('../policies')]) {
      const r = await stack.api('GET', `/v1/policies/${id}`, { token: ta });
      expect(r.status, id).toBe(404);
      expect(r.body.error).toMatchObject({ code: 'not_found', retryable: false });
    }
  });

  it('needs policies/read and a token', async () => {
    const noRead = await stack.createClient({ tenant: tenant1, partner: 'partner-a', permissions: ['health/read'] });
    const t = await stack.token(noRead);
    for (const path of ['/v1/policies', `/v1/policies/${PRODUCT_1}`, '/v1/policies?limit=0']) {
      const r = await stack.api('GET', path, { token: t });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('forbidden');
      expect((await stack.api('GET', path)).status).toBe(401);
    }
  });
});

describe('isolation', () => {
  it('another partner of the same tenant sees none of them, by list, filter, id or cursor', async () => {
    expect((await list(tb)).body).toEqual({ items: [], nextCursor: null });
    expect((await list(tb, '?policyNumber=A-00001')).body.items).toEqual([]);
    const page = await list(ta, '?limit=3');
    for (const p of page.body.items) {
      const r = await stack.api('GET', `/v1/policies/${p.policyId}`, { token: tb });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    const r = await list(tb, `?cursor=${page.body.nextCursor}`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_error');
  });

  it('the same partner id in another tenant is another partner', async () => {
    expect(c.partnerId).toBe(a.partnerId);
    const { items } = await listAll(stack, tc, {}, { limit: 200 });
    expect(items).toHaveLength(20);
    const cIds = new Set(items.map((p) => p.policyId));
    const one = await list(tc, '?policyNumber=A-00001');
    expect(one.body.items).toHaveLength(1);
    expect(cIds.has(one.body.items[0].policyId)).toBe(true);
    const aPage = await list(ta, '?limit=3');
    for (const p of aPage.body.items) {
      expect(cIds.has(p.policyId)).toBe(false);
      expect((await stack.api('GET', `/v1/policies/${p.policyId}`, { token: tc })).status).toBe(404);
    }
    const r = await list(tc, `?cursor=${aPage.body.nextCursor}`);
    expect(r.status).toBe(400);
    expect(r.body.error.details).toEqual([{ field: 'cursor', issue: expect.any(String) }]);
    // And a's own listing never included c's policies.
    expect((await list(ta, '?limit=200&policyNumber=A-00001')).body.items.map((p: { policyId: string }) => p.policyId)).not.toContain(
      one.body.items[0].policyId,
    );
  });
});

describe('policy import', () => {
  it('imports, then updates by policyNumber instead of duplicating', async () => {
    const e = await stack.createClient({ tenant: tenant1, partner: 'partner-e' });
    const te = await stack.token(e);
    const lines = [
      policyLine('E-1', PRODUCT_1, { premium: { amount: '1234.50', currency: 'EUR' }, insured: { legalName: "O'Brien & Sons'); DROP TABLE policies; --" } }),
      policyLine('E-2', PRODUCT_2, { status: 'pending', submissionId: '0192f1a4-7c3e-7b2a-9d4e-1f2a3b4c5d6e' }),
      '',
      policyLine('E-3', PRODUCT_1, { premium: { amount: '0.0001', currency: 'JPY' } }),
    ];
    expect(await stack.admin('policy', 'import', '--tenant', e.tenant, '--partner', e.partnerId, jsonlFile(lines))).toEqual({ imported: 3, updated: 0 });
    const first = await listAll(stack, te);
    expect(first.items).toHaveLength(3);
    const byNumber = Object.fromEntries(first.items.map((p) => [p.policyNumber, p]));
    expect(byNumber['E-1']).toMatchObject({ insured: { legalName: "O'Brien & Sons'); DROP TABLE policies; --" }, premium: { amount: '1234.50', currency: 'EUR' } });
    expect(byNumber['E-1']).not.toHaveProperty('submissionId');
    expect(byNumber['E-2']).toMatchObject({ status: 'pending', submissionId: '0192f1a4-7c3e-7b2a-9d4e-1f2a3b4c5d6e', productId: PRODUCT_2 });
    expect(byNumber['E-3'].premium).toEqual({ amount: '0.0001', currency: 'JPY' });
    for (const p of first.items) {
      expect(p.createdAt).toMatch(ISO_MS);
      expect(p.updatedAt).toBe(p.createdAt);
    }

    // Same numbers again: E-1 changed, E-2 unchanged, E-4 new.
    const again = [
      policyLine('E-1', PRODUCT_1, { status: 'cancelled', premium: { amount: '1234.5', currency: 'EUR' }, insured: { legalName: 'Renamed' } }),
      lines[1]!,
      policyLine('E-4', PRODUCT_1),
    ];
    expect(await stack.admin('policy', 'import', '--tenant', e.tenant, '--partner', e.partnerId, jsonlFile(again))).toEqual({ imported: 1, updated: 2 });
    const second = await listAll(stack, te);
    expect(second.items).toHaveLength(4);
    const after = Object.fromEntries(second.items.map((p) => [p.policyNumber, p]));
    expect(after['E-1']).toMatchObject({
      policyId: byNumber['E-1'].policyId,
      status: 'cancelled',
      insured: { legalName: 'Renamed' },
      premium: { amount: '1234.5', currency: 'EUR' },
      createdAt: byNumber['E-1'].createdAt,
    });
    expect(after['E-1'].updatedAt > byNumber['E-1'].updatedAt).toBe(true);
    expect(after['E-2']).toEqual(byNumber['E-2']);
    // Another partner importing the same numbers gets its own policies.
    expect(await stack.admin('policy', 'import', '--tenant', b.tenant, '--partner', b.partnerId, jsonlFile([lines[0]!]))).toEqual({ imported: 1, updated: 0 });
    expect((await listAll(stack, te)).items).toHaveLength(4);
  });

  it('rejects the whole file on any bad line, reporting each as `line N: field issue`', async () => {
    const f = await stack.createClient({ tenant: tenant1, partner: 'partner-f' });
    const file = jsonlFile([
      policyLine('F-1', PRODUCT_1),
      policyLine('F-2', PRODUCT_1, { status: 'lapsed' }),
      policyLine('F-3', PRODUCT_1, { premium: { amount: 99.9, currency: 'EUR' }, policyId: PRODUCT_1 }),
      '{"policyNumber": "F-4"',
      policyLine('F-5', '11111111-2222-4333-8444-555555555555'),
      policyLine('F-1', PRODUCT_1),
      policyLine('F-7', PRODUCT_1, { effectiveDate: '2025-02-29', expirationDate: undefined }),
    ]);
    const r = await stack.adminRaw('policy', 'import', '--tenant', f.tenant, '--partner', f.partnerId, file);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    const reported = r.stderr.split('\n').filter((l) => l.startsWith('line '));
    expect(reported).toEqual([
      'line 2: status must be one of active, cancelled, expired, pending',
      'line 3: policyId is assigned by the service and cannot be imported',
      'line 3: premium.amount must be a decimal string such as "1234.50", not a JSON number',
      'line 4: (line) is not valid JSON',
      'line 5: productId is not a product of the catalogue (add it with `product add`)',
      'line 6: policyNumber repeats the policy of line 1',
      'line 7: effectiveDate must be a calendar date YYYY-MM-DD',
      'line 7: expirationDate is required',
    ]);
    expect(r.stderr).toMatch(/6 invalid lines; nothing was imported/);
    expect(await count('tenant_id = $1 AND partner_id = $2', [f.tenant, f.partnerId])).toBe(0);
  });

  it('is all or nothing even when the bad line comes after batches were written', async () => {
    const g = await stack.createClient({ tenant: tenant1, partner: 'partner-g' });
    const lines = Array.from({ length: 2500 }, (_, i) => policyLine(`G-${i + 1}`, i % 2 ? PRODUCT_1 : PRODUCT_2));
    const bad = [...lines];
    bad[2399] = policyLine('G-2400', PRODUCT_1, { currency: 'EUR', premium: { amount: '1', currency: 'euro' } });
    const r = await stack.adminRaw('policy', 'import', '--tenant', g.tenant, '--partner', g.partnerId, jsonlFile(bad));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('line 2400: currency is not a policy field');
    expect(r.stderr).toContain('line 2400: premium.currency must be an ISO 4217 code such as EUR');
    expect(await count('tenant_id = $1 AND partner_id = $2', [g.tenant, g.partnerId])).toBe(0);
    expect(await stack.admin('policy', 'import', '--tenant', g.tenant, '--partner', g.partnerId, jsonlFile(lines))).toEqual({ imported: 2500, updated: 0 });
    expect(await count('tenant_id = $1 AND partner_id = $2', [g.tenant, g.partnerId])).toBe(2500);
  });

  it('needs --tenant, --partner and one readable file', async () => {
    const file = jsonlFile([policyLine('H-1', PRODUCT_1)]);
    for (const args of [
      ['--partner', 'partner-h', file],
      ['--tenant', tenant1, file],
      ['--tenant', tenant1, '--partner', 'partner-h'],
      ['--tenant', tenant1, '--partner', 'partner-h', '/nonexistent/policies.jsonl'],
      ['--tenant', 'bad tenant', '--partner', 'partner-h', file],
    ]) {
      const r = await stack.adminRaw('policy', 'import', ...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^error: .*\nusage: npm run -s admin -- policy import --tenant T --partner P FILE.jsonl\nRun `npm run -s admin -- policy import --help`/);
    }
  });

  it('imports the demo policies, dated so that active ones are in force today', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const file = join(mkdtempSync(join(tmpdir(), 'demo-policies-')), 'policies.jsonl');
    writeFileSync(file, execFileSync(process.execPath, [`${ROOT}scripts/demo/policies.mjs`]));
    const demo = await stack.createClient({ tenant: tenant1, partner: 'partner-demo' });
    const out = await stack.admin('policy', 'import', '--tenant', demo.tenant, '--partner', demo.partnerId, file);
    expect(out).toEqual({ imported: 6, updated: 0 });
    const rows = await stack.sql<{ status: string; effective: string; expiration: string }>(
      `SELECT status, effective_date::text AS effective, expiration_date::text AS expiration FROM policy.policies WHERE partner_id = $1`,
      [demo.partnerId],
    );
    expect(rows.length).toBe(6);
    for (const r of rows) {
      if (r.status === 'active') expect(r.effective <= today && today < r.expiration, JSON.stringify(r)).toBe(true);
      if (r.status === 'pending') expect(r.effective > today).toBe(true);
      if (r.status === 'expired') expect(r.expiration < today).toBe(true);
    }
  });
});
