// Baseline (d), the read floor (issue 34): what the gateway does for a read, minus the hops. One bare
// Koa process with
//   - the gateway's token check: the Bearer parse, jose ES256 verification (typ at+jwt, issuer,
//     audience, required claims) on a miss, and a cache by the signature segment, so a reused token
//     costs a prefix check and a Map lookup, as in services/gateway/src/middleware/authenticate.ts;
//   - the service's own SQL, as a named (prepared) statement on one `pg` pool (application_name
//     read-floor, so the bench can count its PostgreSQL backends' CPU);
//   - the API's JSON shape and an HMAC-signed cursor where the product issues one; Koa's
//     JSON.stringify.
// Routes: GET /v1/jobs/:id (job.jobs by id and owner), GET /v1/policies?limit=N (a keyset page of
// policy.policies) and GET /v1/events?limit=N (a page of events.events with the partner's head, the
// events service's readPage statement). No query-string validation beyond limit, no gRPC, no
// client-state or principal lookups (the gateway answers those from caches), no metrics or logs.
import Koa from 'koa';
import Router from '@koa/router';
import pg from 'pg';
import { createHmac } from 'node:crypto';
import { importJWK, jwtVerify } from 'jose';

// As services/shared/src/db/pg.ts: dates and amounts stay strings.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10), application_name: 'read-floor' });
const jwks = await (await fetch(process.env.JWKS_URL)).json();
const keys = new Map();
for (const jwk of jwks.keys) keys.set(jwk.kid, await importJWK(jwk, 'ES256'));
const verifyOptions = {
  issuer: process.env.ISSUER,
  audience: process.env.AUDIENCE,
  algorithms: ['ES256'],
  typ: 'at+jwt',
  clockTolerance: 30,
  requiredClaims: ['exp', 'iat', 'sub', 'jti'],
};
const cursorKey = createHmac('sha256', 'read-floor').update('cursor').digest();

const cache = new Map();
const signatureOf = (token) => token.slice(token.lastIndexOf('.') + 1);
async function authenticate(ctx) {
  const header = ctx.get('authorization');
  const m = /^Bearer +([^\s]+) *$/i.exec(header);
  if (!m) ctx.throw(401);
  const token = m[1];
  let hit = cache.get(signatureOf(token));
  if (!hit || hit.token !== token || hit.exp + 30 <= Date.now() / 1000) {
    const { payload } = await jwtVerify(token, (h) => keys.get(h.kid), verifyOptions).catch(() => ctx.throw(401));
    hit = { token, exp: payload.exp, tenant: payload.tenant, partnerId: payload.partner_id, permissions: new Set(payload.permissions) };
    cache.set(signatureOf(token), hit);
  }
  return hit;
}

const cursorOf = (parts) => {
  const body = Buffer.from(JSON.stringify(parts));
  return Buffer.concat([body, createHmac('sha256', cursorKey).update(body).digest().subarray(0, 16)]).toString('base64url');
};
const limitOf = (ctx, fallback) => {
  const n = ctx.query.limit === undefined ? fallback : Number(ctx.query.limit);
  if (!Number.isInteger(n) || n < 1 || n > 200) ctx.throw(400);
  return n;
};

const JOB_SQL = `SELECT job_id, kind, tenant_id, partner_id, client_id, principal_id, status, result, error,
                 deliveries, created_at, updated_at FROM job.jobs WHERE job_id = $1 AND tenant_id = $2 AND partner_id = $3`;
const POLICIES_SQL = `SELECT policy_id, policy_number, status, product_id, insured_legal_name, effective_date, expiration_date,
  premium_amount, premium_currency, submission_id, created_at, updated_at FROM policy.policies
  WHERE tenant_id = $1 AND partner_id = $2 ORDER BY created_at DESC, policy_id DESC LIMIT $3`;
const EVENTS_SQL = `WITH page AS (
         SELECT partner_seq, event_id, type, "timestamp", data FROM events.events
          WHERE tenant_id = $1 AND partner_id = $2 AND partner_seq > $3
            AND (cardinality($4::text[]) = 0 OR type = ANY($4::text[]))
          ORDER BY partner_seq
          LIMIT $5
       )
       SELECT page.*, h.seq AS head, h.swept_through AS swept
         FROM (SELECT 1) one
         LEFT JOIN events.feed_heads h ON h.tenant_id = $1 AND h.partner_id = $2
         LEFT JOIN page ON true
        ORDER BY page.partner_seq`;

const app = new Koa();
const router = new Router();
router.get('/readyz', (ctx) => {
  ctx.body = { status: 'ok' };
});
router.get('/v1/jobs/:id', async (ctx) => {
  const caller = await authenticate(ctx);
  if (!caller.permissions.has('jobs/read')) ctx.throw(403);
  const { rows } = await pool.query({ name: 'job', text: JOB_SQL, values: [ctx.params.id, caller.tenant, caller.partnerId] });
  const j = rows[0];
  if (!j) ctx.throw(404);
  ctx.body =
    j.status === 'succeeded'
      ? { id: j.job_id, kind: j.kind, status: j.status, result: j.result, createdAt: j.created_at.toISOString(), updatedAt: j.updated_at.toISOString() }
      : { id: j.job_id, kind: j.kind, status: j.status, error: j.error, createdAt: j.created_at.toISOString(), updatedAt: j.updated_at.toISOString() };
});
router.get('/v1/policies', async (ctx) => {
  const caller = await authenticate(ctx);
  if (!caller.permissions.has('policies/read')) ctx.throw(403);
  const limit = limitOf(ctx, 50);
  const { rows } = await pool.query({ name: 'policies', text: POLICIES_SQL, values: [caller.tenant, caller.partnerId, limit + 1] });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  ctx.body = {
    items: page.map((p) => ({
      policyId: p.policy_id,
      policyNumber: p.policy_number,
      status: p.status,
      productId: p.product_id,
      insured: { legalName: p.insured_legal_name },
      effectiveDate: p.effective_date,
      expirationDate: p.expiration_date,
      premium: { amount: p.premium_amount, currency: p.premium_currency },
      ...(p.submission_id ? { submissionId: p.submission_id } : {}),
      createdAt: p.created_at.toISOString(),
      updatedAt: p.updated_at.toISOString(),
    })),
    nextCursor: rows.length > limit && last ? cursorOf([caller.tenant, caller.partnerId, last.created_at.getTime(), last.policy_id]) : null,
  };
});
router.get('/v1/events', async (ctx) => {
  const caller = await authenticate(ctx);
  if (!caller.permissions.has('events/read')) ctx.throw(403);
  const limit = limitOf(ctx, 100);
  const { rows } = await pool.query({ name: 'events', text: EVENTS_SQL, values: [caller.tenant, caller.partnerId, '0', [], limit] });
  const items = rows.filter((r) => r.partner_seq !== null);
  const last = items.at(-1);
  const next = items.length === limit && last ? last.partner_seq : (rows[0]?.head ?? '0');
  ctx.body = {
    items: items.map((e) => ({ id: e.event_id, type: e.type, timestamp: e.timestamp.toISOString(), data: e.data })),
    nextCursor: cursorOf([caller.tenant, caller.partnerId, next]),
  };
});
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', async () => {
  await pool.end().catch(() => undefined);
  process.exit(0);
});
