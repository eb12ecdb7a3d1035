#!/usr/bin/env node
// Shows how PostgreSQL runs the policy listing at scale: creates a throwaway database, applies the
// policy migrations, seeds one partner with N policies (default 1,000,000) beside two other partners,
// and prints EXPLAIN (ANALYZE, BUFFERS) of the service's own list queries (built by listQuery, so
// what is measured is what runs). Needs `npm run build` first.
//   node services/policy/scripts/explain-policies.mjs [N]      (PG_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres)
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createLogger } from '@partner/shared/telemetry/logger';
import { createPool, migrate } from '@partner/shared/db/pg';
import { MIGRATIONS_DIR, SCHEMA } from '../dist/schema.js';
import { listQuery } from '../dist/policies.js';

const N = Number(process.argv[2] ?? 1_000_000);
const adminUrl = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `partner_explain_${randomBytes(4).toString('hex')}`;
const dbUrl = new URL(adminUrl);
dbUrl.pathname = `/${dbName}`;

const PRODUCTS = ['6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b', '0b9a8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d', '11111111-2222-4333-8444-555555555555'];
const owner = { tenantId: 'tenant-1', partnerId: 'partner-big' };

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const logger = createLogger('explain', 'warn', process.stderr);
const pool = createPool({ url: dbUrl.toString(), schema: SCHEMA, max: 2, applicationName: 'explain', logger });
// The service pool has a 15 s query timeout; seeding a million rows takes longer.
const db = new pg.Client({ connectionString: dbUrl.toString(), options: `-c search_path=${SCHEMA}` });
try {
  await migrate(pool, SCHEMA, MIGRATIONS_DIR, logger);
  await db.connect();
  const seed = async (tenant, partner, count) => {
    // Status: 2% pending, 10% cancelled, 8% expired, 80% active. Product: 1% the rare third one.
    // created_at one per second (ties every 4th), updated_at = created_at except 0.5% recently.
    await db.query(
      `INSERT INTO policies (policy_id, tenant_id, partner_id, policy_number, status, product_id, insured_legal_name,
                             effective_date, expiration_date, premium_amount, premium_currency, created_at, updated_at)
       SELECT gen_random_uuid(), $1, $2, 'P-' || lpad(i::text, 8, '0'),
              CASE WHEN i % 50 = 0 THEN 'pending' WHEN i % 10 = 1 THEN 'cancelled' WHEN i % 25 IN (2, 3) THEN 'expired' ELSE 'active' END,
              CASE WHEN i % 100 = 7 THEN $5::uuid WHEN i % 2 = 0 THEN $3::uuid ELSE $4::uuid END,
              'Insured ' || i, DATE '2020-01-01' + (i % 1500), DATE '2021-01-01' + (i % 1500),
              (i % 10000)::numeric + 0.25, 'EUR',
              TIMESTAMPTZ '2022-01-01 00:00:00Z' + (i / 4) * interval '1 second',
              CASE WHEN i % 200 = 0 THEN now() - (i % 1000) * interval '1 minute'
                   ELSE TIMESTAMPTZ '2022-01-01 00:00:00Z' + (i / 4) * interval '1 second' END
         FROM generate_series(1, $6::int) AS i`,
      [tenant, partner, ...PRODUCTS, count],
    );
  };
  const t0 = Date.now();
  await seed(owner.tenantId, owner.partnerId, N);
  await seed('tenant-1', 'partner-other', Math.ceil(N / 5));
  await seed('tenant-2', 'partner-big', Math.ceil(N / 5));
  await db.query('VACUUM ANALYZE policies');
  console.log(`seeded ${N} policies for the partner (+ ${2 * Math.ceil(N / 5)} of two others) in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

  const middle = (await pool.query(
    `SELECT created_at, policy_id FROM policies WHERE tenant_id = $1 AND partner_id = $2 ORDER BY created_at DESC, policy_id DESC OFFSET $3 LIMIT 1`,
    [owner.tenantId, owner.partnerId, Math.floor(N / 2)],
  )).rows[0];
  const after = { createdAtMs: middle.created_at.getTime(), policyId: middle.policy_id };
  const recent = new Date(Date.now() - 3600_000).toISOString();

  const cases = [
    ['first page, no filter', { limit: 50 }],
    ['page in the middle (cursor), no filter', { limit: 50, after }],
    ['last possible page size, 200', { limit: 200, after }],
    ['status=pending (2%)', { limit: 50, status: 'pending' }],
    ['status=active (80%), cursor in the middle', { limit: 50, status: 'active', after }],
    ['productId rare (1%)', { limit: 50, productId: PRODUCTS[2] }],
    ['productId + status', { limit: 50, productId: PRODUCTS[0], status: 'cancelled' }],
    ['policyNumber', { limit: 50, policyNumber: `P-${String(Math.floor(N / 3)).padStart(8, '0')}` }],
    ['updatedSince last hour (few)', { limit: 50, updatedSince: recent }],
    ['updatedSince 2022-06-01 (most)', { limit: 50, updatedSince: '2022-06-01T00:00:00.000Z' }],
  ];
  for (const [title, args] of cases) {
    const q = listQuery(owner, args);
    const r = await db.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${q.text}`, q.values);
    console.log(`== ${title}\n${r.rows.map((row) => row['QUERY PLAN']).join('\n')}\n`);
  }
  const byId = await pool.query(
    'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT * FROM policies WHERE policy_id = $1 AND tenant_id = $2 AND partner_id = $3',
    [middle.policy_id, owner.tenantId, owner.partnerId],
  );
  console.log(`== get by id\n${byId.rows.map((row) => row['QUERY PLAN']).join('\n')}\n`);
  const sizes = await pool.query(
    `SELECT relname, pg_size_pretty(pg_relation_size(oid)) AS size FROM pg_class
      WHERE relnamespace = 'policy'::regnamespace AND relname LIKE 'policies%' ORDER BY relname`,
  );
  console.log('== sizes');
  for (const row of sizes.rows) console.log(`${row.relname}: ${row.size}`);
} finally {
  await db.end();
  await pool.end();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}
