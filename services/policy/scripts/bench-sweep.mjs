#!/usr/bin/env node
// What the wall-clock sweeper costs with many bind-issued policies (issue 43): creates a throwaway
// database, applies the policy migrations, seeds N policies issued by binds (default 100,000) of which
// `due` are due (half pending past their effective date, half active past their expiration date), and
// times (1) an idle pass (nothing due: the usual case, two index probes), and (2) the pass that moves
// the due ones, each with its policy.updated in the outbox. Needs `npm run build` first.
//   node services/policy/scripts/bench-sweep.mjs [N] [DUE]   (PG_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres)
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createLogger } from '@partner/shared/telemetry/logger';
import { createPool, migrate } from '@partner/shared/db/pg';
import { natsNames } from '@partner/shared/nats/client';
import { wallClock } from '@partner/shared/domain/clock';
import { MIGRATIONS_DIR, SCHEMA } from '../dist/schema.js';
import { sweepTransitions } from '../dist/issue/sweeper.js';

const N = Number(process.argv[2] ?? 100_000);
const DUE = Number(process.argv[3] ?? 1_000);
const adminUrl = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `partner_sweep_${randomBytes(4).toString('hex')}`;
const dbUrl = new URL(adminUrl);
dbUrl.pathname = `/${dbName}`;

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const logger = createLogger('bench-sweep', 'warn', process.stderr);
const pool = createPool({ url: dbUrl.toString(), schema: SCHEMA, max: 2, applicationName: 'bench-sweep', logger });
const db = new pg.Client({ connectionString: dbUrl.toString(), options: `-c search_path=${SCHEMA}` });
const names = natsNames('bench');
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
try {
  await migrate(pool, SCHEMA, MIGRATIONS_DIR, logger);
  await db.connect();
  // N bind-issued policies: 60 % active (expiring in the coming year), 40 % pending (effective in the
  // coming 60 days), none due; then DUE of them made due (half each way).
  const t0 = process.hrtime.bigint();
  await db.query(
    `INSERT INTO policies (policy_id, tenant_id, partner_id, policy_number, status, product_id, insured_legal_name,
                           effective_date, expiration_date, premium_amount, premium_currency, submission_id, quote_id,
                           option_limit, option_retention, bind_job_id)
     SELECT gen_random_uuid(), 'tenant-' || (i % 3), 'partner-' || (i % 20), 'P-2026-' || lpad(i::text, 8, '0'),
            CASE WHEN i % 5 < 3 THEN 'active' ELSE 'pending' END, '11111111-2222-4333-8444-555555555555', 'Insured ' || i,
            CASE WHEN i % 5 < 3 THEN current_date - (i % 300) ELSE current_date + 1 + (i % 60) END,
            CASE WHEN i % 5 < 3 THEN current_date - (i % 300) + 365 ELSE current_date + 1 + (i % 60) + 365 END,
            1000.00, 'EUR', gen_random_uuid(), gen_random_uuid(), '1000000', '10000', 'job_seed_' || i
       FROM generate_series(1, $1::int) AS i`,
    [N],
  );
  await db.query(
    `WITH due AS (SELECT policy_id, row_number() OVER () AS n FROM policies ORDER BY policy_id LIMIT $1)
     UPDATE policies p SET status = CASE WHEN due.n % 2 = 0 THEN 'pending' ELSE 'active' END,
            effective_date = CASE WHEN due.n % 2 = 0 THEN current_date - 1 ELSE current_date - 400 END,
            expiration_date = CASE WHEN due.n % 2 = 0 THEN current_date + 364 ELSE current_date - 35 END
       FROM due WHERE p.policy_id = due.policy_id`,
    [DUE],
  );
  await db.query('VACUUM ANALYZE policies');
  console.log(`seeded ${N} bind-issued policies (${DUE} due) in ${(ms(t0) / 1000).toFixed(1)} s`);

  const idleRuns = [];
  const busy = process.hrtime.bigint();
  const moved = await sweepTransitions(pool, names, wallClock);
  const busyMs = ms(busy);
  for (let i = 0; i < 20; i++) {
    const t = process.hrtime.bigint();
    await sweepTransitions(pool, names, wallClock);
    idleRuns.push(ms(t));
  }
  idleRuns.sort((a, b) => a - b);
  const outbox = (await db.query('SELECT count(*)::int AS n FROM event_outbox')).rows[0].n;
  console.log(
    JSON.stringify(
      {
        policies: N,
        due: DUE,
        moved,
        policyUpdatedEvents: outbox,
        duePassMs: Math.round(busyMs),
        duePassMsPerPolicy: Number((busyMs / Math.max(1, moved.activated + moved.expired)).toFixed(3)),
        idlePassMs: { p50: Number(idleRuns[10].toFixed(2)), max: Number(idleRuns.at(-1).toFixed(2)) },
      },
      null,
      2,
    ),
  );
} finally {
  await db.end().catch(() => undefined);
  await pool.end();
  await admin.query(`DROP DATABASE ${dbName} WITH (FORCE)`);
  await admin.end();
}
