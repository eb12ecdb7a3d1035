// Test clocks (API.md "Test clocks", UAT only; issue 44), on the real stack (PostgreSQL, NATS, gRPC,
// HTTP): the clock resources and their limits; submissions on a clock (testClockId on the record, the
// requirements window counted from the clock's day, unknown_test_clock); advances that expire quotes,
// activate and expire policies and report overdue referrals in time order with their events (two
// quotes and two policies whose moments interleave); clock_advancing; bad input; a worker SIGKILLed
// mid-advance over 10,000 due quotes (resumed, nothing applied twice, each event once); production
// (every path 404, testClockId refused, the OpenAPI document without test clocks).
//
// Quotes are written as quote.create writes them (one row per option, the submission's test clock
// copied), so this file tests the clock alone; policies come from real binds of those quotes.
import { describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientCreds } from './support/stack.js';
import { ALL_PERMISSIONS } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { until } from './support/poll.js';
import { PRODUCT } from './support/fixtures.js';
import { DEMO_RATING_PLAN } from '../scripts/demo/product.mjs';
import { PartnerClient } from '../sdk/client/src/index.js';

const WAIT = { prefer: 'wait=25' };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;
type Stack = ReturnType<typeof useStack>;

interface Partner {
  creds: ClientCreds;
  token: string;
}

const T0 = '2030-01-01T00:00:00.000Z';
const RATED = randomUUID();
const RISK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['annualRevenue', 'employees', 'industry'],
  properties: { annualRevenue: { type: 'number' }, employees: { type: 'integer' }, industry: { type: 'string' } },
};
const DIR = mkdtempSync(join(tmpdir(), 'clocks-'));
const file = (doc: unknown) => {
  const f = join(DIR, `${randomUUID()}.json`);
  writeFileSync(f, JSON.stringify(doc));
  return f;
};
const at = (iso: string) => new Date(iso);

async function partner(s: Stack): Promise<Partner> {
  const creds = await s.createClient({ permissions: [...ALL_PERMISSIONS, 'quotes/read', 'quotes/write'] });
  return { creds, token: await s.token(creds) };
}

const createClock = (s: Stack, who: Partner, json: unknown, headers: Record<string, string> = WAIT) =>
  s.api('POST', '/v1/test_clocks', { token: who.token, headers, json });
const advance = (s: Stack, who: Partner, id: string, frozenTime: unknown, headers: Record<string, string> = WAIT) =>
  s.api('POST', `/v1/test_clocks/${id}/advance`, { token: who.token, headers, json: { frozenTime } });

async function clock(s: Stack, who: Partner, frozenTime = T0, name?: string): Promise<Json> {
  const res = await createClock(s, who, { frozenTime, ...(name ? { name } : {}) });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function submission(s: Stack, who: Partner, o: { effectiveDate: string; testClockId?: string; product?: string; risk?: Json }) {
  return s.api('POST', '/v1/submissions', {
    token: who.token,
    headers: WAIT,
    json: {
      externalRef: `ref-${randomUUID()}`,
      submissionType: 'application',
      effectiveDate: o.effectiveDate,
      productId: o.product ?? PRODUCT,
      applicant: { legalName: `Clock Test ${randomUUID()} LLC` },
      ...(o.testClockId ? { testClockId: o.testClockId } : {}),
      ...(o.risk ? { risk: o.risk } : {}),
    },
  });
}

/** An open (or referred) quote of a submission, as quote.create writes it on the submission's clock. */
async function quote(s: Stack, who: Partner, submissionId: string, testClockId: string | null, o: { validUntil?: Date; referralDueBy?: Date }) {
  const quoteId = randomUUID();
  const offer = `eyJhbGciOiJFUzI1NiJ9.${Buffer.from(JSON.stringify({ quoteId })).toString('base64url')}.c2ln`;
  const referred = o.referralDueBy !== undefined;
  await s.sql(
    `INSERT INTO policy.quotes (quote_id, tenant_id, partner_id, submission_id, product_id, job_id, option_index, option_limit, option_retention,
       status, premium_amount, premium_currency, rating_version, valid_until, offer, offer_sha256, test_clock_id, referral_reasons, referral_due_by)
     VALUES ($1, $2, $3, $4, $5, $6, 0, '1000000', '10000', $7, $8, $15, 1, $9, $10, $11, $12, $13::jsonb, $14)`,
    [
      quoteId,
      who.creds.tenant,
      who.creds.partnerId,
      submissionId,
      PRODUCT,
      `job_${randomUUID().replace(/-/g, '')}`,
      referred ? 'referred' : 'open',
      referred ? null : '1234.50',
      referred ? null : o.validUntil,
      referred ? null : offer,
      referred ? null : sha256(offer),
      testClockId,
      referred ? JSON.stringify([{ code: 'large_risk', field: 'risk.annualRevenue' }]) : null,
      o.referralDueBy ?? null,
      referred ? null : 'EUR',
    ],
  );
  return { quoteId, offerSha256: sha256(offer) };
}

/** The partner's events of these types about these records, in feed order. */
async function eventsAbout(s: Stack, who: Partner, ids: string[]): Promise<Json[]> {
  const rows = await s.sql<{ type: string; data: Json }>(
    `SELECT type, data FROM events.events WHERE tenant_id = $1 AND partner_id = $2 AND type IN ('quote.updated', 'policy.updated')
       AND CASE type WHEN 'quote.updated' THEN data->>'quoteId' ELSE data->>'policyId' END = ANY($3::text[]) ORDER BY position`,
    [who.creds.tenant, who.creds.partnerId, ids],
  );
  return rows;
}

describe('test clocks (UAT)', () => {
  let p: Partner;
  let other: Partner;
  const stack = useStack(async (s) => {
    // Two transitions per batch: an advance's time order must hold across its batches too.
    await s.startAll({ OUTBOX_RELAY_INTERVAL_MS: '100', POLICY_SWEEP_INTERVAL_MS: '200', TEST_CLOCK_ADVANCE_BATCH: '2' });
    await s.admin('product', 'add', '--id', PRODUCT, '--name', 'Cyber Liability');
    await s.admin('product', 'add', '--id', RATED, '--name', 'Rated GL');
    await s.admin('product', 'requirements', 'set', '--id', RATED, file({ risk: RISK_SCHEMA }));
    await s.admin('product', 'rating', 'set', '--id', RATED, file(DEMO_RATING_PLAN));
    p = await partner(s);
    other = await partner(s);
  });

  it('creates, reads, lists and deletes clocks; 10 live clocks per partner; another partner sees none of them', async () => {
    const who = await partner(stack);
    const c = await clock(stack, who, '2030-01-01T01:00:00+01:00', 'renewals');
    expect(c).toEqual({
      testClockId: expect.stringMatching(/^clk_[0-9a-z]{24}$/),
      name: 'renewals',
      frozenTime: T0,
      status: 'ready',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await stack.api('GET', `/v1/test_clocks/${c.testClockId}`, { token: who.token })).body).toEqual(c);
    expect((await stack.api('GET', `/v1/test_clocks/${c.testClockId}`, { token: other.token })).status).toBe(404);
    expect((await stack.api('GET', '/v1/test_clocks/clk_nope', { token: who.token })).status).toBe(404);
    const unnamed = await clock(stack, who);
    expect(unnamed.name).toBeNull();
    for (let i = 0; i < 8; i++) await clock(stack, who);
    const eleventh = await createClock(stack, who, { frozenTime: T0 });
    expect(eleventh.status, eleventh.text).toBe(422);
    expect(eleventh.body.error).toMatchObject({ code: 'limit_exceeded', retryable: false });

    // Paginated like the other lists, newest first.
    const page1 = await stack.api('GET', '/v1/test_clocks?limit=4', { token: who.token });
    expect(page1.status).toBe(200);
    expect(page1.body.items).toHaveLength(4);
    const seen = [...page1.body.items];
    for (let cursor = page1.body.nextCursor; cursor; ) {
      const next = await stack.api('GET', `/v1/test_clocks?limit=4&cursor=${encodeURIComponent(cursor)}`, { token: who.token });
      seen.push(...next.body.items);
      cursor = next.body.nextCursor;
    }
    expect(seen.map((x) => x.testClockId)).toHaveLength(10);
    expect(seen.at(-1)).toEqual(c);
    expect((await stack.api('GET', '/v1/test_clocks?limit=0', { token: who.token })).status).toBe(400);
    expect((await stack.api('GET', '/v1/test_clocks?cursor=garbled', { token: who.token })).status).toBe(400);
    expect((await stack.api('GET', '/v1/test_clocks', { token: other.token })).body.items).toEqual([]);

    // Delete (a job): gone for the API; the slot is free again.
    expect((await stack.api('DELETE', `/v1/test_clocks/${c.testClockId}`, { token: other.token, headers: WAIT })).status).toBe(404);
    const del = await stack.api('DELETE', `/v1/test_clocks/${c.testClockId}`, { token: who.token, headers: WAIT });
    expect(del.status, del.text).toBe(200);
    expect(del.body).toEqual({ testClockId: c.testClockId, deleted: true });
    expect((await stack.api('GET', `/v1/test_clocks/${c.testClockId}`, { token: who.token })).status).toBe(404);
    await clock(stack, who);
  });

  it('the SDK: testClocks.create/get/list/advance/delete, and a failed job as a typed error', async () => {
    const who = await partner(stack);
    const client = new PartnerClient({
      baseUrl: stack.gatewayUrl,
      authUrl: stack.authUrl,
      clientId: who.creds.clientId,
      clientSecret: who.creds.clientSecret,
      scope: stack.scope,
    });
    const c = await client.testClocks.create({ frozenTime: T0, name: 'sdk' });
    expect(c).toMatchObject({ name: 'sdk', frozenTime: T0, status: 'ready' });
    expect(await client.testClocks.get(c.testClockId)).toMatchObject({ testClockId: c.testClockId });
    expect((await client.testClocks.list()).items.map((x) => x.testClockId)).toEqual([c.testClockId]);
    const ids: string[] = [];
    for await (const x of client.testClocks.iterate({ limit: 1 })) ids.push(x.testClockId);
    expect(ids).toEqual([c.testClockId]);
    const moved = await client.testClocks.advance(c.testClockId, new Date('2030-03-01T00:00:00Z'));
    expect(moved).toMatchObject({ frozenTime: '2030-03-01T00:00:00.000Z', status: 'ready', applied: { quotesExpired: 0 } });
    for (let i = 0; i < 9; i++) await client.testClocks.create({ frozenTime: T0 });
    await expect(client.testClocks.create({ frozenTime: T0 })).rejects.toMatchObject({ code: 'limit_exceeded' });
    expect(await client.testClocks.delete(c.testClockId)).toEqual({ testClockId: c.testClockId, deleted: true });
    await expect(client.testClocks.get(c.testClockId)).rejects.toMatchObject({ status: 404 });
  });

  it('refuses bad input: frozenTime without a zone, not later, more than two years ahead (400 naming frozenTime); unknown fields', async () => {
    const c = await clock(stack, p);
    for (const bad of ['2030-01-01T00:00:00', '2030-01-01', 'tomorrow', 42]) {
      const r = await createClock(stack, p, { frozenTime: bad });
      expect(r.status, String(bad)).toBe(400);
      expect(r.body.error.details.map((d: Json) => d.field)).toContain('frozenTime');
    }
    for (const bad of ['2030-01-01T00:00:00', T0, '2029-12-31T23:59:59Z', '2032-01-01T00:00:00.001Z', '2032-01-03T00:00:00Z']) {
      const r = await advance(stack, p, c.testClockId, bad);
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field: 'frozenTime' })] });
    }
    expect((await stack.api('POST', '/v1/test_clocks', { token: p.token, headers: WAIT, json: { frozenTime: T0, color: 'red' } })).status).toBe(400);
    expect((await advance(stack, other, c.testClockId, '2030-02-01T00:00:00Z')).status).toBe(404);
    // Nothing moved.
    expect((await stack.api('GET', `/v1/test_clocks/${c.testClockId}`, { token: p.token })).body.frozenTime).toBe(T0);
  });

  it('submissions on a clock show it; a clock not the partner\'s fails the create job 422 unknown_test_clock', async () => {
    const c = await clock(stack, p);
    const s = await submission(stack, p, { effectiveDate: '2030-01-10', testClockId: c.testClockId });
    expect(s.status, s.text).toBe(200);
    expect(s.body.testClockId).toBe(c.testClockId);
    expect((await stack.api('GET', `/v1/submissions/${s.body.submissionId}`, { token: p.token })).body.testClockId).toBe(c.testClockId);
    const foreign = await submission(stack, other, { effectiveDate: '2030-01-10', testClockId: c.testClockId });
    expect(foreign.status, foreign.text).toBe(422);
    expect(foreign.body.error).toMatchObject({ code: 'unknown_test_clock', retryable: false });
    expect(foreign.body.jobId).toMatch(/^job_/);
  });

  it('counts the requirements\' effective-date window from the clock\'s day', async () => {
    const product = randomUUID();
    await stack.admin('product', 'add', '--id', product, '--name', 'Windowed GL');
    const dir = mkdtempSync(join(tmpdir(), 'clock-req-'));
    const file = join(dir, 'req.json');
    writeFileSync(file, JSON.stringify({ effectiveDate: { minDaysAhead: 1, maxDaysAhead: 30 } }));
    const set = await stack.adminRaw('product', 'requirements', 'set', '--id', product, file);
    expect(set.code, set.stderr).toBe(0);
    const c = await clock(stack, p, '2030-06-01T12:00:00Z');
    // 9 days after the clock's day: inside the window on the clock, far outside it on the wall clock.
    const onClock = await submission(stack, p, { effectiveDate: '2030-06-10', testClockId: c.testClockId, product });
    expect(onClock.status, onClock.text).toBe(200);
    const wall = await submission(stack, p, { effectiveDate: '2030-06-10', product });
    expect(wall.status).toBe(422);
    expect(wall.body.error.code).toBe('requirements_not_met');
    // POST /v1/submissions/validate judges on the same day.
    const body = { externalRef: 'validate-on-clock', submissionType: 'application', effectiveDate: '2030-06-10', productId: product, applicant: { legalName: 'Validated LLC' } };
    const onClockVerdict = await stack.api('POST', '/v1/submissions/validate', { token: p.token, json: { ...body, testClockId: c.testClockId } });
    expect(onClockVerdict.body).toMatchObject({ valid: true });
    const wallVerdict = await stack.api('POST', '/v1/submissions/validate', { token: p.token, json: body });
    expect(wallVerdict.body).toMatchObject({ valid: false, errors: [expect.objectContaining({ field: 'effectiveDate' })] });
    // The clock's day itself is before the window (minDaysAhead 1); 31 days after it is past it.
    for (const d of ['2030-06-01', '2030-07-02']) {
      const r = await submission(stack, p, { effectiveDate: d, testClockId: c.testClockId, product });
      expect(r.status, d).toBe(422);
      expect(r.body.error.code).toBe('requirements_not_met');
    }
  });

  it('advances: quotes expire, policies take effect and expire, referrals fall overdue — in time order, each with its event', async () => {
    const c = await clock(stack, p);
    const id = c.testClockId as string;
    // Two policies (bound on the clock, pending at its day) and two quotes whose moments interleave:
    // qC expires 01-05, pA takes effect 01-10, qD expires 01-15, pB takes effect 01-20.
    const sA = (await submission(stack, p, { effectiveDate: '2030-01-10', testClockId: id })).body;
    const sB = (await submission(stack, p, { effectiveDate: '2030-01-20', testClockId: id })).body;
    const sC = (await submission(stack, p, { effectiveDate: '2030-03-01', testClockId: id })).body;
    const sD = (await submission(stack, p, { effectiveDate: '2030-03-01', testClockId: id })).body;
    const policies: Json[] = [];
    for (const s of [sA, sB]) {
      const q = await quote(stack, p, s.submissionId, id, { validUntil: at('2030-01-31T00:00:00Z') });
      const bound = await stack.api('POST', `/v1/quotes/${q.quoteId}/bind`, { token: p.token, headers: WAIT, json: { offerSha256: q.offerSha256 } });
      expect(bound.status, bound.text).toBe(200);
      expect(bound.body).toMatchObject({ status: 'pending', testClockId: id, effectiveDate: s.effectiveDate });
      policies.push(bound.body);
    }
    const qC = await quote(stack, p, sC.submissionId, id, { validUntil: at('2030-01-05T00:00:00Z') });
    const qD = await quote(stack, p, sD.submissionId, id, { validUntil: at('2030-01-15T00:00:00Z') });
    const referral = await quote(stack, p, sD.submissionId, id, { referralDueBy: at('2030-01-02T00:00:00Z') });
    // A quote on the wall clock with the same validUntil is the sweeper's: the clock never moves it.
    const wall = (await submission(stack, p, { effectiveDate: '2030-03-01' })).body;
    const qWall = await quote(stack, p, wall.submissionId, null, { validUntil: new Date(Date.now() + 86_400_000) });
    const [pA, pB] = policies as [Json, Json];

    const first = await advance(stack, p, id, '2030-02-01T00:00:00Z');
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      testClockId: id,
      frozenTime: '2030-02-01T00:00:00.000Z',
      status: 'ready',
      applied: { quotesExpired: 2, policiesActivated: 2, policiesExpired: 0, referralsOverdue: 1 },
    });
    // The job succeeded after everything committed: the records read in their new state at once.
    expect((await stack.api('GET', `/v1/policies/${pA.policyId}`, { token: p.token })).body.status).toBe('active');
    expect((await stack.api('GET', `/v1/policies/${pB.policyId}`, { token: p.token })).body.status).toBe('active');
    const status = async (q: string) => (await stack.sql<{ status: string }>('SELECT status FROM policy.quotes WHERE quote_id = $1', [q]))[0]!.status;
    expect(await status(qC.quoteId)).toBe('expired');
    expect(await status(qD.quoteId)).toBe('expired');
    expect(await status(referral.quoteId)).toBe('referred');
    expect(await status(qWall.quoteId)).toBe('open');

    const ids = [qC.quoteId, qD.quoteId, pA.policyId, pB.policyId];
    const inOrder = await until('the four events in the feed', async () => {
      const e = await eventsAbout(stack, p, ids);
      return e.length >= 4 && e;
    });
    expect(inOrder.map((e) => [e.type, e.type === 'quote.updated' ? e.data.quoteId : e.data.policyId, e.data.status])).toEqual([
      ['quote.updated', qC.quoteId, 'expired'],
      ['policy.updated', pA.policyId, 'active'],
      ['quote.updated', qD.quoteId, 'expired'],
      ['policy.updated', pB.policyId, 'active'],
    ]);
    expect(inOrder[0]!.data.validUntil).toBe('2030-01-05T00:00:00.000Z');

    // A bind of an expired quote on the clock fails as on the wall clock.
    const late = await stack.api('POST', `/v1/quotes/${qD.quoteId}/bind`, { token: p.token, headers: WAIT, json: { offerSha256: qD.offerSha256 } });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'quote_not_open', details: [{ field: 'status', issue: 'expired' }] });

    // A year on: both policies expire, in their order (pA after 2031-01-10, pB after 2031-01-20).
    const second = await advance(stack, p, id, '2031-02-01T00:00:00Z');
    expect(second.status, second.text).toBe(200);
    expect(second.body.applied).toEqual({ quotesExpired: 0, policiesActivated: 0, policiesExpired: 2, referralsOverdue: 0 });
    const all = await until('six events', async () => {
      const e = await eventsAbout(stack, p, ids);
      return e.length >= 6 && e;
    });
    expect(all.slice(4).map((e) => [e.data.policyId, e.data.status])).toEqual([
      [pA.policyId, 'expired'],
      [pB.policyId, 'expired'],
    ]);
    expect(all).toHaveLength(6);
  });

  it('quote.create reads the clock: validUntil and dueBy from its time; an advance expires the quote; 409 clock_advancing while it advances', async () => {
    const c = await clock(stack, p);
    const risk = { annualRevenue: 2_000_000, employees: 12, industry: 'retail' };
    const s = (await submission(stack, p, { effectiveDate: '2030-02-01', testClockId: c.testClockId, product: RATED, risk })).body;
    expect(s.testClockId).toBe(c.testClockId);
    const quoted = await stack.api('POST', `/v1/submissions/${s.submissionId}/quotes`, { token: p.token, headers: WAIT, json: { options: [{ limit: '1000000', retention: '10000' }] } });
    expect(quoted.status, quoted.text).toBe(200);
    const [q] = quoted.body.quotes as Json[];
    expect(q).toMatchObject({ status: 'open', validUntil: '2030-01-31T00:00:00.000Z', testClockId: c.testClockId });
    const referredSub = (await submission(stack, p, { effectiveDate: '2030-02-01', testClockId: c.testClockId, product: RATED, risk: { ...risk, industry: 'construction' } })).body;
    const referred = await stack.api('POST', `/v1/submissions/${referredSub.submissionId}/quotes`, { token: p.token, headers: WAIT, json: { options: [{ limit: '1000000', retention: '10000' }] } });
    expect(referred.body.quotes[0]).toMatchObject({ status: 'referred', referral: { dueBy: '2030-01-02T00:00:00.000Z' } });

    const moved = await advance(stack, p, c.testClockId, '2030-01-31T00:00:00Z');
    expect(moved.body.applied).toEqual({ quotesExpired: 1, policiesActivated: 0, policiesExpired: 0, referralsOverdue: 1 });
    const read = await stack.api('GET', `/v1/quotes/${q!.quoteId}`, { token: p.token });
    expect(read.body).toMatchObject({ status: 'expired', validUntil: '2030-01-31T00:00:00.000Z' });
    const [event] = await until('quote.updated expired', async () => {
      const e = await eventsAbout(stack, p, [q!.quoteId]);
      return e.length > 0 && e;
    });
    expect(event!.data).toMatchObject({ quoteId: q!.quoteId, status: 'expired' });

    await stack.sql(`UPDATE policy.test_clocks SET status = 'advancing', advance_job_id = 'job_elsewhere', advance_to = $2 WHERE test_clock_id = $1`, [
      c.testClockId,
      at('2030-03-01T00:00:00Z'),
    ]);
    const blocked = await stack.api('POST', `/v1/submissions/${s.submissionId}/quotes`, { token: p.token, headers: WAIT, json: { options: [{ limit: '1000000', retention: '10000' }] } });
    expect(blocked.status, blocked.text).toBe(409);
    expect(blocked.body.error).toMatchObject({ code: 'clock_advancing', retryable: true });
  });

  it('while a clock advances, binds on its submissions and its delete fail 409 clock_advancing (retryable)', async () => {
    const c = await clock(stack, p);
    const s = (await submission(stack, p, { effectiveDate: '2030-01-10', testClockId: c.testClockId })).body;
    const q = await quote(stack, p, s.submissionId, c.testClockId, { validUntil: at('2030-01-31T00:00:00Z') });
    // An advance under way (another job holds the clock): as the advance job's first batch leaves it.
    await stack.sql(`UPDATE policy.test_clocks SET status = 'advancing', advance_job_id = 'job_elsewhere', advance_to = $2 WHERE test_clock_id = $1`, [
      c.testClockId,
      at('2030-02-01T00:00:00Z'),
    ]);
    expect((await stack.api('GET', `/v1/test_clocks/${c.testClockId}`, { token: p.token })).body.status).toBe('advancing');
    const bind = await stack.api('POST', `/v1/quotes/${q.quoteId}/bind`, { token: p.token, headers: WAIT, json: { offerSha256: q.offerSha256 } });
    expect(bind.status, bind.text).toBe(409);
    expect(bind.body.error).toMatchObject({ code: 'clock_advancing', retryable: true });
    const del = await stack.api('DELETE', `/v1/test_clocks/${c.testClockId}`, { token: p.token, headers: WAIT });
    expect(del.status).toBe(409);
    expect(del.body.error).toMatchObject({ code: 'clock_advancing', retryable: true });
    const adv = await advance(stack, p, c.testClockId, '2030-03-01T00:00:00Z');
    expect(adv.status).toBe(409);
    expect(adv.body.error).toMatchObject({ code: 'clock_advancing', retryable: true });
    // Once ready again, the retried bind succeeds.
    await stack.sql(`UPDATE policy.test_clocks SET status = 'ready', advance_job_id = NULL, advance_to = NULL WHERE test_clock_id = $1`, [c.testClockId]);
    const retried = await stack.api('POST', `/v1/quotes/${q.quoteId}/bind`, { token: p.token, headers: WAIT, json: { offerSha256: q.offerSha256 } });
    expect(retried.status, retried.text).toBe(200);
  });

  it('a deleted clock\'s records keep their state and stop moving', async () => {
    const c = await clock(stack, p);
    const s = (await submission(stack, p, { effectiveDate: '2030-01-10', testClockId: c.testClockId })).body;
    const q = await quote(stack, p, s.submissionId, c.testClockId, { validUntil: at('2030-01-05T00:00:00Z') });
    expect((await stack.api('DELETE', `/v1/test_clocks/${c.testClockId}`, { token: p.token, headers: WAIT })).status).toBe(200);
    expect((await advance(stack, p, c.testClockId, '2030-02-01T00:00:00Z')).status).toBe(404);
    expect((await stack.sql<{ status: string }>('SELECT status FROM policy.quotes WHERE quote_id = $1', [q.quoteId]))[0]!.status).toBe('open');
  });

  it('production: every test-clock path is 404, testClockId on a create body is 400 naming it, and the document lists no test clock', async () => {
    const uat = stack.gatewayUrl;
    await stack.startGateway({ ENVIRONMENT: 'production' });
    const prod = stack.gatewayUrl;
    stack.gatewayUrl = uat;
    const c = await clock(stack, p);
    const calls: [string, string, unknown?][] = [
      ['POST', '/v1/test_clocks', { frozenTime: T0 }],
      ['GET', '/v1/test_clocks'],
      ['GET', `/v1/test_clocks/${c.testClockId}`],
      ['DELETE', `/v1/test_clocks/${c.testClockId}`],
      ['POST', `/v1/test_clocks/${c.testClockId}/advance`, { frozenTime: '2030-02-01T00:00:00Z' }],
    ];
    // Plain fetch: the conformance check of stack.api holds responses to the UAT document.
    const raw = async (method: string, path: string, json?: unknown) => {
      const res = await fetch(`${prod}${path}`, {
        method,
        headers: { authorization: `Bearer ${p.token}`, ...WAIT, ...(json ? { 'content-type': 'application/json' } : {}) },
        ...(json ? { body: JSON.stringify(json) } : {}),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };
    for (const [method, path, json] of calls) {
      const r = await raw(method, path, json);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    const body = {
      externalRef: `ref-${randomUUID()}`,
      submissionType: 'application',
      effectiveDate: '2030-01-10',
      productId: PRODUCT,
      applicant: { legalName: 'Production Co' },
      testClockId: c.testClockId,
    };
    const refused = await raw('POST', '/v1/submissions', body);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'testClockId' })]);
    const doc = (await (await fetch(`${prod}/v1/openapi.json`)).json()) as Json;
    expect(Object.keys(doc.paths).filter((x) => x.includes('test_clock'))).toEqual([]);
    expect(Object.keys(doc.components.schemas).filter((x) => x.startsWith('TestClock'))).toEqual([]);
    expect((doc.tags as Json[]).map((t) => t.name)).not.toContain('Test clocks');
    const uatDoc = (await stack.api('GET', '/v1/openapi.json')).body;
    expect(Object.keys(uatDoc.paths)).toEqual(expect.arrayContaining(['/v1/test_clocks', '/v1/test_clocks/{testClockId}', '/v1/test_clocks/{testClockId}/advance']));
  });
});

describe('an advance over 10,000 due transitions, its worker SIGKILLed mid-way', () => {
  let p: Partner;
  const stack = useStack(async (s) => {
    await s.startAll({ OUTBOX_RELAY_INTERVAL_MS: '100' }, { worker: false });
    await s.admin('product', 'add', '--id', PRODUCT, '--name', 'Cyber Liability');
    p = await partner(s);
  });
  const WORKER = { WORKER_ACK_WAIT_MS: '2000', WORKER_BACKOFF_MS: '100', TEST_CLOCK_ADVANCE_BATCH: '500' };

  it('resumes from its last committed batch: every quote expired once, each event once, the job succeeds', async () => {
    const worker = await stack.spawnService('worker', WORKER);
    const c = await clock(stack, p);
    const s = (await submission(stack, p, { effectiveDate: '2030-03-01', testClockId: c.testClockId })).body;
    const N = 10_000;
    // 10,000 open quotes on the clock, one falling due each minute after its time.
    await stack.sql(
      `INSERT INTO policy.quotes (quote_id, tenant_id, partner_id, submission_id, product_id, job_id, option_index, option_limit, option_retention,
         status, premium_amount, premium_currency, rating_version, valid_until, offer, offer_sha256, test_clock_id)
       SELECT gen_random_uuid(), $1, $2, $3, $4, 'job_bulk_' || (i / 5), i % 5, '1000000', '10000', 'open', 100, 'EUR', 1,
              $5::timestamptz + i * interval '1 minute', 'o' || i, repeat('a', 64), $6
         FROM generate_series(1, $7::int) AS i`,
      [p.creds.tenant, p.creds.partnerId, s.submissionId, PRODUCT, T0, c.testClockId, N],
    );
    const accepted = await advance(stack, p, c.testClockId, '2030-02-01T00:00:00Z', {});
    expect(accepted.status, accepted.text).toBe(202);
    const jobId = accepted.body.id as string;
    await until('three batches committed', async () => {
      const [row] = await stack.sql<{ batches: number }>('SELECT batches FROM policy.test_clock_advances WHERE job_id = $1', [jobId]);
      return (row?.batches ?? 0) >= 3;
    }, 60_000);
    worker.kill('SIGKILL');
    await worker.exited;
    const [mid] = await stack.sql<{ batches: number; finished_at: Date | null; quotes_expired: number }>(
      'SELECT batches, finished_at, quotes_expired FROM policy.test_clock_advances WHERE job_id = $1',
      [jobId],
    );
    expect(mid!.finished_at).toBeNull();
    expect(mid!.quotes_expired).toBeLessThan(N);
    expect((await stack.api('GET', `/v1/test_clocks/${c.testClockId}`, { token: p.token })).body.status).toBe('advancing');

    await stack.spawnService('worker', WORKER);
    const settled = await until('the advance settles', async () => {
      const r = await stack.api('GET', `/v1/jobs/${jobId}`, { token: p.token, headers: { prefer: 'wait=25' } });
      return r.body.status !== 'processing' && r.body;
    }, 120_000);
    expect(settled.status, JSON.stringify(settled)).toBe('succeeded');
    expect(settled.result).toMatchObject({ status: 'ready', frozenTime: '2030-02-01T00:00:00.000Z', applied: { quotesExpired: N } });
    const [counts] = await stack.sql<{ open: string; expired: string }>(
      `SELECT count(*) FILTER (WHERE status = 'open') AS open, count(*) FILTER (WHERE status = 'expired') AS expired FROM policy.quotes WHERE test_clock_id = $1`,
      [c.testClockId],
    );
    expect(counts).toEqual({ open: '0', expired: String(N) });
    // Each quote.updated once: in the feed's store exactly N, one per quote.
    const events = await until('every event stored', async () => {
      const [r] = await stack.sql<{ n: string; distinct_quotes: string }>(
        `SELECT count(*) AS n, count(DISTINCT data->>'quoteId') AS distinct_quotes FROM events.events
          WHERE tenant_id = $1 AND partner_id = $2 AND type = 'quote.updated'`,
        [p.creds.tenant, p.creds.partnerId],
      );
      return Number(r!.n) >= N && r;
    }, 60_000);
    expect(events).toEqual({ n: String(N), distinct_quotes: String(N) });
  }, 300_000);
});
