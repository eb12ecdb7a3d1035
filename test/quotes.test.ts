// Quotes end to end (issue 42; API.md "Quotes, underwriting referrals, bind and issue"), against real
// PostgreSQL, NATS JetStream, gRPC and HTTP: open quotes with offers that verify with jose against the
// served receipt JWKS and repeat the quote's terms; referrals approved (a new offer) and declined, by
// the UAT test helper and by the admin command; declines listing every reason; supersede; every
// refusal of the contract, before any quote exists; a redelivered quote.create creating nothing new;
// isolation between partners; and the events each change emits.
import { describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { createClient, serviceDefs } from '@partner/shared/grpc';
import { ROOT, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { until } from './support/poll.js';
import { scrape } from './support/metrics.js';
import { DEMO_RATING_PLAN } from '../scripts/demo/product.mjs';
import { HANDLERS, type HandlerContext } from '../services/worker/src/job-handlers.js';
import { OfferVerificationError, verifyOffer as sdkVerifyOffer, type ReceiptKeySet } from '../sdk/client/src/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API bodies are checked field by field
type Json = Record<string, any>;

const TENANT = `tenant-quotes-${randomUUID().slice(0, 8)}`;
const RATED = randomUUID();
const DOCS_DUE = randomUUID();
const UNRATED = randomUUID();
const WAIT = { prefer: 'wait=20' };
const DAY = 86_400_000;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const RISK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['annualRevenue', 'employees', 'industry'],
  properties: {
    annualRevenue: { type: 'number', minimum: 0, maximum: 100000000000 },
    employees: { type: 'integer', minimum: 0, maximum: 1000000 },
    industry: { type: 'string', enum: ['retail', 'office', 'restaurant', 'manufacturing', 'construction'] },
  },
};
/** The demo plan with a second decline rule, so a risk can match both. */
const PLAN = {
  ...DEMO_RATING_PLAN,
  decline: [...DEMO_RATING_PLAN.decline, { field: 'risk.annualRevenue', op: 'gt', value: 900000000, code: 'revenue_out_of_appetite' }],
};

interface Partner {
  creds: ClientCreds;
  token: string;
}
let a: Partner;
let b: Partner;

const dir = mkdtempSync(join(tmpdir(), 'quotes-'));
const file = (doc: unknown) => {
  const f = join(dir, `${randomUUID()}.json`);
  writeFileSync(f, JSON.stringify(doc));
  return f;
};

const stack = useStack(async (s) => {
  await s.startAll({ OUTBOX_RELAY_INTERVAL_MS: '100' });
  await s.admin('product', 'add', '--id', RATED, '--name', 'Rated GL');
  await s.admin('product', 'requirements', 'set', '--id', RATED, file({ risk: RISK_SCHEMA }));
  await s.admin('product', 'rating', 'set', '--id', RATED, file(PLAN));
  await s.admin('product', 'add', '--id', DOCS_DUE, '--name', 'Rated GL, loss runs due');
  await s.admin('product', 'requirements', 'set', '--id', DOCS_DUE, file({ risk: RISK_SCHEMA, attachments: [{ documentType: 'loss_run', min: 1, max: 5 }] }));
  await s.admin('product', 'rating', 'set', '--id', DOCS_DUE, file(PLAN));
  await s.admin('product', 'add', '--id', UNRATED, '--name', 'Not rated');
  const partner = async (): Promise<Partner> => {
    const creds = await s.createClient({ tenant: TENANT });
    return { creds, token: await s.token(creds) };
  };
  [a, b] = [await partner(), await partner()];
});

let seq = 0;
const newTaxId = () => String(100_000_000 + Math.floor(Math.random() * 800_000_000) + ++seq).slice(0, 9);
const RETAIL = { annualRevenue: 2500000, employees: 12, industry: 'retail' };

async function submit(p: Partner, risk: Json = RETAIL, over: Json = {}): Promise<Json> {
  const res = await stack.api('POST', '/v1/submissions', {
    token: p.token,
    headers: WAIT,
    json: {
      externalRef: `ref-${randomUUID()}`,
      submissionType: 'application',
      effectiveDate: '2027-01-01',
      productId: RATED,
      applicant: { legalName: `Insured ${randomUUID()}`, taxId: newTaxId() },
      risk,
      ...over,
    },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const requestQuotes = (p: Partner, submissionId: string, options: unknown, headers: Record<string, string> = WAIT) =>
  stack.api('POST', `/v1/submissions/${submissionId}/quotes`, { token: p.token, headers, json: { options } });

async function quote(p: Partner, submissionId: string, options: Json[] = [{ limit: '1000000', retention: '10000' }]): Promise<Json[]> {
  const res = await requestQuotes(p, submissionId, options);
  expect(res.status, res.text).toBe(200);
  expect(res.body.submissionId).toBe(submissionId);
  return res.body.quotes;
}

const get = (p: Partner, path: string) => stack.api('GET', path, { token: p.token });
const decide = (p: Partner, quoteId: string, json: Json) => stack.api('POST', `/v1/test_helpers/quotes/${quoteId}/decide`, { token: p.token, headers: WAIT, json });
const listQuotes = async (p: Partner, submissionId: string, query = ''): Promise<Json[]> => {
  const res = await get(p, `/v1/submissions/${submissionId}/quotes${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.items;
};

async function jwks(): Promise<JSONWebKeySet> {
  const res = await stack.api('GET', '/.well-known/receipt-keys.json');
  expect(res.status).toBe(200);
  return res.body;
}

/** Verifies an offer against the served JWKS; returns its claims, which must repeat the quote's terms. */
async function verifyOffer(q: Json, p: Partner): Promise<Json> {
  expect(typeof q.offer).toBe('string');
  const header = decodeProtectedHeader(q.offer);
  expect(header).toMatchObject({ alg: 'ES256', typ: 'offer+jws' });
  const keys = await jwks();
  expect(keys.keys.map((k) => k.kid)).toContain(header.kid);
  const { payload } = await compactVerify(q.offer, createLocalJWKSet(keys));
  const claims = JSON.parse(new TextDecoder().decode(payload)) as Json;
  expect(claims).toEqual({
    iss: expect.any(String),
    tenant: p.creds.tenant,
    partnerId: p.creds.partnerId,
    quoteId: q.quoteId,
    submissionId: q.submissionId,
    productId: q.productId,
    option: q.option,
    premium: q.premium,
    validUntil: q.validUntil,
    ratingVersion: q.ratingVersion,
    iat: expect.any(Number),
  });
  // The SDK's offline check agrees, and holds the claims to the quote's terms.
  expect(await sdkVerifyOffer(q.offer, keys as ReceiptKeySet, q as never)).toEqual(claims);
  await expect(sdkVerifyOffer(q.offer, keys as ReceiptKeySet, { ...q, validUntil: new Date(0).toISOString() } as never)).rejects.toThrow(OfferVerificationError);
  return claims;
}

/** The partner's feed events of the quote.* types, oldest first. */
async function quoteEvents(p: Partner): Promise<Json[]> {
  const items: Json[] = [];
  for (let cursor = ''; ; ) {
    const res = await get(p, `/v1/events?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status, res.text).toBe(200);
    items.push(...res.body.items);
    if (res.body.items.length === 0) return items.filter((e) => e.type.startsWith('quote.'));
    cursor = res.body.nextCursor;
  }
}
const eventually = (p: Partner, what: string, match: (events: Json[]) => boolean) =>
  until(what, async () => {
    const events = await quoteEvents(p);
    return match(events) ? events : false;
  });

const near = (iso: string, expectedMs: number, slackMs = 120_000) => {
  expect(Math.abs(Date.parse(iso) - expectedMs)).toBeLessThan(slackMs);
};

describe('quotes: open, with signed offers', () => {
  it('rates every option in order, opens them with validUntil and an offer that verifies against the receipt JWKS', async () => {
    const s = await submit(a);
    const before = Date.now();
    const quotes = await quote(a, s.submissionId, [
      { limit: '1000000', retention: '10000' },
      { limit: '2000000', retention: '25000' },
    ]);
    expect(quotes).toHaveLength(2);
    // 2,500,000 / 1000 × 1.25 × retail 1 × region default 1 × limit × retention
    expect(quotes.map((q) => [q.status, q.option, q.premium])).toEqual([
      ['open', { limit: '1000000', retention: '10000' }, { amount: '3125.00', currency: 'USD' }],
      ['open', { limit: '2000000', retention: '25000' }, { amount: '4500.00', currency: 'USD' }],
    ]);
    for (const q of quotes) {
      expect(q).toMatchObject({ submissionId: s.submissionId, productId: RATED, ratingVersion: 1, referral: null, decline: null, testClockId: null });
      near(q.validUntil, before + 30 * DAY);
      await verifyOffer(q, a);
      const read = await get(a, `/v1/quotes/${q.quoteId}`);
      expect(read.status, read.text).toBe(200);
      expect(read.body).toEqual(q);
    }
    const events = await eventually(a, 'quote.created for both', (es) => quotes.every((q) => es.some((e) => e.type === 'quote.created' && e.data.quoteId === q.quoteId)));
    for (const q of quotes) expect(events.find((e) => e.type === 'quote.created' && e.data.quoteId === q.quoteId)!.data).toEqual(q);
    const listed = await listQuotes(a, s.submissionId);
    expect(listed.map((q) => q.quoteId).sort()).toEqual(quotes.map((q) => q.quoteId).sort());
    expect(await listQuotes(a, s.submissionId, '?status=referred')).toEqual([]);
    expect((await listQuotes(a, s.submissionId, '?status=open')).length).toBe(2);
    const page = await get(a, `/v1/submissions/${s.submissionId}/quotes?limit=1`);
    expect(page.body.items).toHaveLength(1);
    const next = await get(a, `/v1/submissions/${s.submissionId}/quotes?limit=1&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(next.body.items).toHaveLength(1);
    expect(next.body.nextCursor).toBeNull();
    expect(next.body.items[0].quoteId).not.toBe(page.body.items[0].quoteId);
  });

  it('signs an offer under the receipt keys\' lock: while a key rotation would hold it, the quote waits, then is signed', async () => {
    const s = await submit(a);
    const holder = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await holder.connect();
    try {
      // The lock a rotation takes (exclusive); every receipt and offer takes it shared.
      await holder.query("SELECT pg_advisory_lock(hashtext('submission:receipt-keys'))");
      const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const pending = requestQuotes(a, s.submissionId, [{ limit: '1000000', retention: '10000' }]);
      await until('the offer waits for the key lock', async () => {
        const [w] = await stack.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks w JOIN pg_locks h USING (locktype, database, classid, objid, objsubid)
            WHERE w.locktype = 'advisory' AND h.pid = $1 AND h.granted AND NOT w.granted`,
          [pid],
        );
        return w!.n > 0;
      });
      await holder.query("SELECT pg_advisory_unlock(hashtext('submission:receipt-keys'))");
      const res = await pending;
      expect(res.status, res.text).toBe(200);
      await verifyOffer(res.body.quotes[0], a);
    } finally {
      await holder.end();
    }
  });

  it('an offer changed by one byte does not verify', async () => {
    const s = await submit(a);
    const [q] = await quote(a, s.submissionId);
    const [h, p, sig] = q!.offer.split('.');
    const forged = JSON.parse(Buffer.from(p, 'base64url').toString()) as Json;
    forged.premium.amount = '1.00';
    await expect(compactVerify(`${h}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${sig}`, createLocalJWKSet(await jwks()))).rejects.toThrow();
  });
});

describe('referrals', () => {
  it('refers with every matching reason and a dueBy; the UAT helper approves at a new premium: open, a new offer, quote.updated', async () => {
    const s = await submit(a, { annualRevenue: 60000000, employees: 40, industry: 'construction' });
    const before = Date.now();
    const [q] = await quote(a, s.submissionId);
    expect(q).toMatchObject({ status: 'referred', offer: null, validUntil: null, decline: null });
    expect(q!.referral.reasons).toEqual([
      { code: 'revenue_above_authority', field: 'risk.annualRevenue' },
      { code: 'construction_review', field: 'risk.industry' },
    ]);
    expect(q!.referral.decision).toBeUndefined();
    near(q!.referral.dueBy, before + 24 * 3_600_000);

    const approved = await decide(a, q!.quoteId, { outcome: 'approved', premium: '9500.00', note: 'Loss history reviewed.' });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({ quoteId: q!.quoteId, status: 'open', premium: { amount: '9500.00', currency: 'USD' } });
    expect(approved.body.referral).toMatchObject({ reasons: q!.referral.reasons, dueBy: q!.referral.dueBy, decision: { outcome: 'approved', note: 'Loss history reviewed.' } });
    near(approved.body.validUntil, Date.now() + 30 * DAY);
    const claims = await verifyOffer(approved.body, a);
    expect(claims.premium).toEqual({ amount: '9500.00', currency: 'USD' });
    expect((await get(a, `/v1/quotes/${q!.quoteId}`)).body).toEqual(approved.body);
    const events = await eventually(a, 'quote.updated (approved)', (es) => es.some((e) => e.type === 'quote.updated' && e.data.quoteId === q!.quoteId));
    expect(events.find((e) => e.type === 'quote.updated' && e.data.quoteId === q!.quoteId)!.data).toEqual(approved.body);

    // Deciding it again: 409 conflict naming its status.
    const again = await decide(a, q!.quoteId, { outcome: 'declined' });
    expect(again.status, again.text).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'status', issue: expect.stringContaining('open') }] });
  });

  it('the UAT helper declines: declined, no premium, no offer; another partner\'s quote is 404 there', async () => {
    const s = await submit(a, { annualRevenue: 100000, employees: 3, industry: 'construction' });
    const [q] = await quote(a, s.submissionId);
    expect(q!.status).toBe('referred');
    expect((await decide(b, q!.quoteId, { outcome: 'declined' })).status).toBe(404);
    const declined = await decide(a, q!.quoteId, { outcome: 'declined', note: 'Out of appetite.' });
    expect(declined.status, declined.text).toBe(200);
    expect(declined.body).toMatchObject({ status: 'declined', premium: null, offer: null, decline: { reasons: [{ code: 'underwriter_declined', field: null }] } });
    expect(declined.body.referral.decision).toMatchObject({ outcome: 'declined', note: 'Out of appetite.' });
    expect((await decide(a, q!.quoteId, { outcome: 'approved', bogus: 1 })).status).toBe(400);
  });

  it('operators list referrals (JSON Lines with age and dueBy) and decide them with the admin command', async () => {
    const s = await submit(a, { annualRevenue: 70000000, employees: 40, industry: 'office' });
    const [q] = await quote(a, s.submissionId);
    const listed = await stack.adminRaw('quote', 'referrals');
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split('\n').map((l) => JSON.parse(l) as Json);
    const mine = lines.find((l) => l.quoteId === q!.quoteId);
    expect(mine).toMatchObject({ tenantId: TENANT, partnerId: a.creds.partnerId, submissionId: s.submissionId, dueBy: q!.referral.dueBy, overdue: false });
    expect(mine!.ageSeconds).toBeGreaterThanOrEqual(0);
    const overdue = await stack.adminRaw('quote', 'referrals', '--overdue');
    expect(overdue.stdout).not.toContain(q!.quoteId);
    const before = await scrape(stack.opsUrls.policy!);
    expect(before.sum('partner_quote_referrals_waiting')).toBeGreaterThanOrEqual(1);
    expect(before.sum('partner_quote_referral_oldest_age_seconds')).toBeGreaterThanOrEqual(0);
    // Past its dueBy: listed as overdue, and counted by the gauge the alert reads.
    await stack.sql("UPDATE policy.quotes SET referral_due_by = now() - interval '1 minute' WHERE quote_id = $1", [q!.quoteId]);
    const late = (await stack.adminRaw('quote', 'referrals', '--overdue')).stdout.trim().split('\n').map((l) => JSON.parse(l) as Json);
    expect(late.find((l) => l.quoteId === q!.quoteId)).toMatchObject({ overdue: true });
    expect((await scrape(stack.opsUrls.policy!)).sum('partner_quote_referrals_overdue')).toBeGreaterThanOrEqual(1);

    const decided = await stack.admin('quote', 'decide', '--id', q!.quoteId, '--approve', '--note', 'ok', '--by', 'uw-jane');
    expect(decided).toMatchObject({ quoteId: q!.quoteId, status: 'open', premium: q!.premium, referral: { decision: { outcome: 'approved', note: 'ok' } } });
    await verifyOffer(decided, a);
    expect((await stack.sql<{ decision_decided_by: string }>('SELECT decision_decided_by FROM policy.quotes WHERE quote_id = $1', [q!.quoteId]))[0]!.decision_decided_by).toBe('operator:uw-jane');
    const after = await scrape(stack.opsUrls.policy!);
    expect(after.sum('partner_quote_referral_decisions', { outcome: 'approved' })).toBe(before.sum('partner_quote_referral_decisions', { outcome: 'approved' }) + 1);
    await eventually(a, 'quote.updated (admin approval)', (es) => es.some((e) => e.type === 'quote.updated' && e.data.quoteId === q!.quoteId && e.data.status === 'open'));

    const conflict = await stack.adminRaw('quote', 'decide', '--id', q!.quoteId, '--decline', '--reason', 'late_change');
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('is open');

    const s2 = await submit(a, { annualRevenue: 70000000, employees: 40, industry: 'office' });
    const [q2] = await quote(a, s2.submissionId);
    const declined = await stack.admin('quote', 'decide', '--id', q2!.quoteId, '--decline', '--reason', 'revenue_concentration');
    expect(declined).toMatchObject({ status: 'declined', premium: null, decline: { reasons: [{ code: 'revenue_concentration', field: null }] } });
    expect((await stack.adminRaw('quote', 'decide', '--id', q2!.quoteId, '--decline')).code).toBe(2);
  });
});

describe('declines and supersede', () => {
  it('declines listing every decline rule that matched, with no premium and no offer', async () => {
    const s = await submit(a, { annualRevenue: 950000000, employees: 6000, industry: 'construction' });
    const [q] = await quote(a, s.submissionId);
    expect(q).toMatchObject({ status: 'declined', premium: null, offer: null, validUntil: null, referral: null });
    expect(q!.decline.reasons).toEqual([
      { code: 'too_many_employees', field: 'risk.employees' },
      { code: 'revenue_out_of_appetite', field: 'risk.annualRevenue' },
    ]);
  });

  it('a later request supersedes the earlier open and referred quotes (quote.updated), not the declined ones', async () => {
    const s = await submit(a, { annualRevenue: 2500000, employees: 12, industry: 'retail' });
    const first = await quote(a, s.submissionId, [
      { limit: '1000000', retention: '10000' },
      { limit: '5000000', retention: '0' },
    ]);
    expect(first.map((q) => q.status)).toEqual(['open', 'open']);
    const second = await quote(a, s.submissionId, [{ limit: '2000000', retention: '10000' }]);
    expect(second[0]!.status).toBe('open');
    for (const q of first) expect((await get(a, `/v1/quotes/${q.quoteId}`)).body.status).toBe('superseded');
    expect((await listQuotes(a, s.submissionId, '?status=superseded')).length).toBe(2);
    expect((await listQuotes(a, s.submissionId, '?status=open')).map((q) => q.quoteId)).toEqual([second[0]!.quoteId]);
    await eventually(a, 'quote.updated (superseded) for both', (es) =>
      first.every((q) => es.some((e) => e.type === 'quote.updated' && e.data.quoteId === q.quoteId && e.data.status === 'superseded')),
    );
    // A decide of a superseded quote: 409 conflict naming its status.
    const res = await decide(a, first[0]!.quoteId, { outcome: 'approved' });
    expect(res.status).toBe(409);
    expect(res.body.error.details).toEqual([{ field: 'status', issue: 'is superseded, not referred' }]);
  });
});

describe('a rating plan replaced', () => {
  it('quotes after `product rating set` are rated with the new version, though the worker kept the old plan', async () => {
    // A product of its own: the others' plan stays as it is for the other tests.
    const product = randomUUID();
    await stack.admin('product', 'add', '--id', product, '--name', 'Re-planned GL');
    await stack.admin('product', 'requirements', 'set', '--id', product, file({ risk: RISK_SCHEMA }));
    await stack.admin('product', 'rating', 'set', '--id', product, file(PLAN));
    const s = await submit(a, RETAIL, { productId: product });
    const [first] = await quote(a, s.submissionId);
    // 2,500 × 1.25 (retail, the default region, the 1M limit and 10K retention: factors of 1).
    expect(first).toMatchObject({ status: 'open', ratingVersion: 1, premium: { amount: '3125.00', currency: 'USD' } });

    // The worker keeps the plan it rated with; nothing tells it of the change. The store refuses
    // quotes rated with version 1 now, so the job reads version 2 and rates again.
    expect(await stack.admin('product', 'rating', 'set', '--id', product, file({ ...PLAN, rate: '2.5' }))).toMatchObject({ ratingVersion: 2 });
    const [second] = await quote(a, s.submissionId);
    expect(second).toMatchObject({ status: 'open', ratingVersion: 2, premium: { amount: '6250.00', currency: 'USD' } });
    expect((await verifyOffer(second!, a)).ratingVersion).toBe(2);
    expect((await get(a, `/v1/quotes/${first!.quoteId}`)).body.status).toBe('superseded');
    const stored = await stack.sql<{ rating_version: string; n: string }>(
      'SELECT rating_version, count(*) AS n FROM policy.quotes WHERE submission_id = $1 GROUP BY 1 ORDER BY 1',
      [s.submissionId],
    );
    expect(stored.map((r) => [Number(r.rating_version), Number(r.n)])).toEqual([[1, 1], [2, 1]]);
  });
});

describe('withdraw', () => {
  it('a withdrawn submission\'s open and referred quotes become not_taken (quote.updated)', async () => {
    const s = await submit(a, { annualRevenue: 2500000, employees: 12, industry: 'retail' });
    const quotes = await quote(a, s.submissionId, [
      { limit: '1000000', retention: '10000' },
      { limit: '5000000', retention: '0' },
    ]);
    expect(quotes.map((q) => q.status)).toEqual(['open', 'open']);
    const w = await stack.api('POST', `/v1/submissions/${s.submissionId}/withdraw`, { token: a.token, headers: WAIT, json: { reason: 'applicant_withdrew' } });
    expect(w.status, w.text).toBe(200);
    // The job answered after both steps: the quotes read not_taken at once.
    for (const q of quotes) expect((await get(a, `/v1/quotes/${q.quoteId}`)).body.status).toBe('not_taken');
    expect(await listQuotes(a, s.submissionId, '?status=open')).toEqual([]);
    await eventually(a, 'quote.updated (not_taken) for both', (es) =>
      quotes.every((q) => es.some((e) => e.type === 'quote.updated' && e.data.quoteId === q.quoteId && e.data.status === 'not_taken')),
    );
  });
});

describe('refusals, before any quote exists', () => {
  const refused = async (p: Partner, submissionId: string, options: Json[], status: number, code: string): Promise<Json> => {
    const res = await requestQuotes(p, submissionId, options);
    expect(res.status, res.text).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(await listQuotes(p, submissionId)).toEqual([]);
    return res.body.error;
  };
  const one = [{ limit: '1000000', retention: '10000' }];

  it('409 not_quotable naming status for a withdrawn submission', async () => {
    const s = await submit(a);
    const w = await stack.api('POST', `/v1/submissions/${s.submissionId}/withdraw`, { token: a.token, headers: WAIT, json: { reason: 'applicant_withdrew' } });
    expect(w.status, w.text).toBe(200);
    const error = await refused(a, s.submissionId, one, 409, 'not_quotable');
    expect(error.details).toEqual([{ field: 'status', issue: 'is withdrawn' }]);
  });

  it('409 not_quotable naming clearance.status for a submission whose clearance is not cleared', async () => {
    const taxId = newTaxId();
    await submit(a, RETAIL, { applicant: { legalName: 'Held Risk LLC', taxId } });
    const blocked = await submit(b, RETAIL, { applicant: { legalName: 'Held Risk LLC', taxId } });
    expect(blocked.clearance.status).toBe('blocked');
    const error = await refused(b, blocked.submissionId, one, 409, 'not_quotable');
    expect(error.details).toEqual([{ field: 'clearance.status', issue: 'is blocked, not cleared' }]);
  });

  it('422 requirements_not_met while requirements.currentlyDue is not empty', async () => {
    const s = await submit(a, RETAIL, { productId: DOCS_DUE });
    expect(s.requirements.currentlyDue.length).toBeGreaterThan(0);
    const error = await refused(a, s.submissionId, one, 422, 'requirements_not_met');
    expect(error.details[0].field).toBe('requirements.currentlyDue');
  });

  it('422 option_not_offered naming options[i].limit / options[i].retention', async () => {
    const s = await submit(a);
    const error = await refused(a, s.submissionId, [{ limit: '1000000', retention: '10000' }, { limit: '3000000', retention: '10000' }, { limit: '1000000', retention: '500' }], 422, 'option_not_offered');
    expect(error.details.map((d: Json) => d.field)).toEqual(['options[1].limit', 'options[2].retention']);
  });

  it('422 product_not_rated for a product without a rating plan', async () => {
    const s = await submit(a, RETAIL, { productId: UNRATED, risk: undefined });
    await refused(a, s.submissionId, one, 422, 'product_not_rated');
  });

  it('400 naming options for none, more than five, a non-string limit, duplicates; 404 for an unknown submission', async () => {
    const s = await submit(a);
    const six = ['0', '10000', '25000', '0', '10000', '25000'].map((retention, i) => ({ limit: i < 3 ? '1000000' : '2000000', retention }));
    for (const options of [[], six, [{ limit: 1000000, retention: '10000' }], [one[0], one[0]], 'x']) {
      const res = await requestQuotes(a, s.submissionId, options);
      expect(res.status, JSON.stringify(options)).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.map((d: Json) => d.field)).toContain('options');
    }
    expect((await requestQuotes(a, randomUUID(), one)).status).toBe(404);
    expect((await requestQuotes(a, 'not-a-uuid', one)).status).toBe(404);
    expect(await listQuotes(a, s.submissionId)).toEqual([]);
  });
});

describe('isolation', () => {
  it("another partner's submission and quotes are 404 everywhere", async () => {
    const s = await submit(a);
    const [q] = await quote(a, s.submissionId);
    expect((await requestQuotes(b, s.submissionId, [{ limit: '1000000', retention: '10000' }])).status).toBe(404);
    expect((await get(b, `/v1/quotes/${q!.quoteId}`)).status).toBe(404);
    expect((await get(b, `/v1/submissions/${s.submissionId}/quotes`)).status).toBe(404);
    expect((await quoteEvents(b)).some((e) => e.data.quoteId === q!.quoteId)).toBe(false);
    expect((await get(a, `/v1/quotes/${randomUUID()}`)).status).toBe(404);
  });

  it('needs quotes/read and quotes/write', async () => {
    const s = await submit(a);
    const reader = await stack.token(await stack.createClient({ tenant: TENANT, partner: a.creds.partnerId, permissions: ['quotes/read'] }));
    const res = await stack.api('POST', `/v1/submissions/${s.submissionId}/quotes`, { token: reader, headers: WAIT, json: { options: [{ limit: '1000000', retention: '10000' }] } });
    expect(res.status).toBe(403);
    expect((await stack.api('GET', `/v1/submissions/${s.submissionId}/quotes`, { token: reader })).status).toBe(200);
  });
});

describe('idempotency', () => {
  it('a redelivered quote.create (same job id) answers with the quotes it created and creates nothing new', async () => {
    const s = await submit(a);
    const res = await requestQuotes(a, s.submissionId, [{ limit: '1000000', retention: '10000' }]);
    expect(res.status, res.text).toBe(200);
    const jobId = res.headers.get('job-id')!;
    const count = async () => Number((await stack.sql<{ n: string }>('SELECT count(*) AS n FROM policy.quotes WHERE submission_id = $1', [s.submissionId]))[0]!.n);
    expect(await count()).toBe(1);
    const submission = createClient(serviceDefs().submission, stack.env.SUBMISSION_GRPC_ADDR!, 10_000);
    const policy = createClient(serviceDefs().policy, stack.env.POLICY_GRPC_ADDR!, 10_000);
    try {
      // The worker's handler again, as a redelivery runs it.
      const ctx = { clients: { submission, policy }, sandbox: true } as unknown as HandlerContext;
      const job = { id: jobId, kind: 'quote.create', caller: { tenantId: a.creds.tenant, partnerId: a.creds.partnerId, principalId: '' }, createdAt: '' };
      const again = (await HANDLERS['quote.create']!(job as never, { submissionId: s.submissionId, options: [{ limit: '1000000', retention: '10000' }] }, ctx)) as Json;
      expect(again).toEqual(res.body);
      // A delivery that rated before the first one committed stores nothing either: the job's quotes win.
      const stale = await policy.CreateQuotes({
        owner: { tenantId: a.creds.tenant, partnerId: a.creds.partnerId },
        jobId,
        submissionId: s.submissionId,
        productId: RATED,
        ratingVersion: 1,
        testClockId: '',
        quotesJson: JSON.stringify([{ quoteId: randomUUID(), option: { limit: '1000000', retention: '10000' }, status: 'referred', premium: { amount: '1.00', currency: 'USD' }, validUntil: null, referral: { reasons: [], dueBy: new Date().toISOString() }, decline: null }]),
      });
      expect(stale.quotes.map((q) => JSON.parse(q.recordJson) as Json)).toEqual(res.body.quotes);
      // No quote at all is a bad call, not a replaced plan.
      await expect(
        policy.CreateQuotes({ owner: { tenantId: a.creds.tenant, partnerId: a.creds.partnerId }, jobId, submissionId: s.submissionId, productId: RATED, ratingVersion: 1, testClockId: '', quotesJson: '[]' }),
      ).rejects.toMatchObject({ code: 'validation_error' });
    } finally {
      submission.close();
      policy.close();
    }
    expect(await count()).toBe(1);
    // The same Idempotency-Key replays the same job.
    const key = randomUUID();
    const k1 = await requestQuotes(a, s.submissionId, [{ limit: '2000000', retention: '10000' }], { ...WAIT, 'idempotency-key': key });
    const k2 = await requestQuotes(a, s.submissionId, [{ limit: '2000000', retention: '10000' }], { ...WAIT, 'idempotency-key': key });
    expect(k2.headers.get('job-id')).toBe(k1.headers.get('job-id'));
    expect(k2.body).toEqual(k1.body);
    expect(await count()).toBe(2);
    expect(sha256(k1.body.quotes[0].offer)).toMatch(/^[0-9a-f]{64}$/);
    expect((await stack.sql<{ offer_sha256: string }>('SELECT offer_sha256 FROM policy.quotes WHERE quote_id = $1', [k1.body.quotes[0].quoteId]))[0]!.offer_sha256).toBe(sha256(k1.body.quotes[0].offer));
  });
});

describe('the CLI', () => {
  const CLI = join(ROOT, 'sdk/cli/dist/main.js');
  const cli = (args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      const env = { PARTNER_BASE_URL: stack.gatewayUrl, PARTNER_AUTH_URL: stack.authUrl, PARTNER_CLIENT_ID: a.creds.clientId, PARTNER_CLIENT_SECRET: a.creds.clientSecret, PARTNER_SCOPE: stack.scope };
      const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(stdin);
    });

  it('partner quotes request|get|list|verify-offer', async () => {
    const s = await submit(a);
    const requested = await cli(['quotes', 'request', '--submission', s.submissionId, '--option', '1000000/10000', '--option', '2000000/25000', '--json']);
    expect(requested.code, requested.stderr).toBe(0);
    const created = JSON.parse(requested.stdout) as Json;
    expect(created.quotes.map((q: Json) => q.premium.amount)).toEqual(['3125.00', '4500.00']);
    const id = created.quotes[0].quoteId as string;
    const got = await cli(['quotes', 'get', id, '--json']);
    expect(JSON.parse(got.stdout)).toEqual(created.quotes[0]);
    const listed = await cli(['quotes', 'list', '--submission', s.submissionId, '--status', 'open', '--json']);
    expect((JSON.parse(listed.stdout) as Json).items).toHaveLength(2);
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify(await jwks()));
    writeFileSync(join(dir, 'quote.json'), got.stdout);
    const verified = await cli(['quotes', 'verify-offer', 'quote.json', '--jwks', 'jwks.json', '--json']);
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ valid: true, matchesQuote: true, offerSha256: sha256(created.quotes[0].offer), claims: { quoteId: id } });
    writeFileSync(join(dir, 'other.json'), JSON.stringify({ ...created.quotes[0], premium: { amount: '1.00', currency: 'USD' } }));
    const mismatch = await cli(['quotes', 'verify-offer', 'other.json', '--jwks', 'jwks.json', '--json']);
    expect(mismatch.code).toBe(1);
    expect(JSON.parse(mismatch.stdout)).toMatchObject({ valid: false, error: expect.stringContaining('premium') });
    const bad = await cli(['quotes', 'request', '--submission', s.submissionId, '--option', '1000000']);
    expect(bad.code).toBe(2);
  });
});
