// Submissions as jobs, end to end: validation before any job exists, the 202 handle, Prefer: wait on
// POST and GET /v1/jobs/{id}, settlement wake-ups, failures within the wait, idempotency (also under
// concurrency), isolation between partners, and waiting without database queries.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { until } from './support/poll.js';
import { scrape } from './support/metrics.js';
import { createClient, serviceDefs } from '@partner/shared/grpc';
import { newJobId } from '@partner/shared/domain/ids';
import { PRODUCT } from './support/fixtures.js';

const INACTIVE = '11111111-2222-4333-8444-666666666666';
let client: ClientCreds;
let token: string;

const stack = useStack(async (stack) => {
  // One partner holds a thousand waits below (the per-partner cap has its own test: noisy-neighbour).
  await stack.startAll({ MAX_WAITERS_PER_PARTNER: '2000' });
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test General Liability');
  await stack.admin('product', 'add', '--id', INACTIVE, '--name', 'Withdrawn', '--inactive');
  client = await stack.createClient();
  token = await stack.token(client);
});

const submission = (over: Record<string, unknown> = {}) => ({
  externalRef: `ref-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: PRODUCT,
  applicant: { legalName: 'Acme Holdings LLC' },
  ...over,
});
const post = (json: unknown, headers: Record<string, string> = {}, t = token) =>
  stack.api('POST', '/v1/submissions', { token: t, json, headers });
const jobPath = (statusUrl: string) => new URL(statusUrl).pathname;
const waiting = async () => (await scrape(stack.gatewayOpsUrl)).sum('partner_gateway_waiting_requests');
const countJobs = async () => Number((await stack.sql<{ n: string }>('SELECT count(*) AS n FROM job.jobs'))[0]!.n);

/**
 * A job no worker will pick up (never published): it settles when the test settles it through the job
 * service, which publishes the settlement event as a worker's SettleJob would.
 */
async function unpublishedJob(): Promise<string> {
  const jobId = newJobId();
  await stack.sql(
    `INSERT INTO job.jobs (job_id, kind, tenant_id, partner_id, client_id, payload, status) VALUES ($1, 'submission.create', $2, $3, $4, '{}', 'accepted')`,
    [jobId, client.tenant, client.partnerId, client.clientId],
  );
  return jobId;
}

async function settle(jobId: string): Promise<void> {
  const jobs = createClient(serviceDefs().job, stack.env.JOB_GRPC_ADDR!, 5_000);
  try {
    await jobs.SettleJob({ jobId, resultJson: JSON.stringify({ submissionId: randomUUID(), submissionName: 'Waited Upon Ltd', status: 'submitted', clearance: { status: 'cleared', basis: null, decidedAt: new Date().toISOString() } }) });
  } finally {
    jobs.close();
  }
}

describe('validation before any job exists', () => {
  it('lists every failing field, rejects unknown fields and impossible dates, and queues nothing', async () => {
    const before = await countJobs();
    const r = await post({ submissionType: 'quote', effectiveDate: '2027-02-30', productId: 'not-a-uuid', applicant: { legalName: '   ', age: 3 }, extra: 1 });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_error');
    expect(r.body.error.retryable).toBe(false);
    const fields = (r.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['applicant.age', 'applicant.legalName', 'effectiveDate', 'externalRef', 'extra', 'productId', 'submissionType']);
    expect(await countJobs()).toBe(before);
  });

  it.each([
    ['2027-02-29', false],
    ['2028-02-29', true],
    ['2027-13-01', false],
    ['2027-1-01', false],
  ])('checks that %s is a real calendar date', async (date, ok) => {
    const r = await post(submission({ effectiveDate: date }));
    expect(r.status).toBe(ok ? 202 : 400);
  });

  it('answers invalid JSON, wrong content types and oversized bodies with their codes', async () => {
    const bad = await stack.api('POST', '/v1/submissions', { token, headers: { 'content-type': 'application/json' }, body: '{"externalRef": ' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_json');
    const text = await stack.api('POST', '/v1/submissions', { token, headers: { 'content-type': 'text/plain' }, body: JSON.stringify(submission()) });
    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe('unsupported_media_type');
    const huge = await post(submission({ externalRef: 'x'.repeat(1024 * 1024 + 10) }));
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('payload_too_large');
  });
});

describe('the applicant: taxId and address', () => {
  const address = { line1: '1 Main Street', city: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' };

  it('stores the FEIN as 9 digits and the address as given, in the submission, the list and submission.created', async () => {
    const r = await post(submission({ applicant: { legalName: 'Acme Holdings LLC', taxId: '12-3456789', address: { ...address, line2: 'Suite 2' } } }), { prefer: 'wait=10' });
    expect(r.status).toBe(200);
    const s = await stack.api('GET', `/v1/submissions/${r.body.submissionId}`, { token });
    expect(s.body.applicant).toEqual({ legalName: 'Acme Holdings LLC', taxId: '123456789', address: { ...address, line2: 'Suite 2' } });
    const list = await stack.api('GET', `/v1/submissions?externalRef=${encodeURIComponent(s.body.externalRef)}`, { token });
    expect(list.body.items[0].applicant).toEqual(s.body.applicant);
    const created = async () =>
      (await stack.sql<{ data: { applicant: unknown } }>(
        `SELECT data FROM events.events WHERE type = 'submission.created' AND data->>'submissionId' = $1`,
        [r.body.submissionId],
      ))[0];
    await until('submission.created stored in the feed', async () => (await created()) !== undefined);
    expect((await created())!.data.applicant).toEqual(s.body.applicant);
  });

  it('leaves out what was not given', async () => {
    const r = await post(submission({ applicant: { legalName: 'Plain Name Ltd' } }), { prefer: 'wait=10' });
    const s = await stack.api('GET', `/v1/submissions/${r.body.submissionId}`, { token });
    expect(s.body.applicant).toEqual({ legalName: 'Plain Name Ltd' });
  });

  it.each([
    [{ taxId: '12345678' }, 'applicant.taxId', 'US FEIN'],
    [{ taxId: '12-345-6789' }, 'applicant.taxId', 'US FEIN'],
    [{ address: { ...address, country: 'XX' } }, 'applicant.address.country', 'ISO 3166-1'],
    [{ address: { ...address, country: 'us' } }, 'applicant.address.country', 'ISO 3166-1'],
    [{ address: { ...address, postalCode: '' } }, 'applicant.address.postalCode', 'must contain a visible character'],
    [{ address: { ...address, city: undefined } }, 'applicant.address.city', 'required'],
    [{ address: { ...address, zip: '1' } }, 'applicant.address.zip', 'not a known field'],
  ])('refuses %j naming the field', async (over, field, issue) => {
    const r = await post(submission({ applicant: { legalName: 'Acme', ...over } }));
    expect(r.status).toBe(400);
    const details = r.body.error.details as { field: string; issue: string }[];
    expect([...new Set(details.map((d) => d.field))]).toEqual([field]);
    expect(details[0]!.issue).toContain(issue);
  });
});

describe('UAT sandbox directives', () => {
  it.each(['sandbox:delay=61', 'sandbox:delay=0', 'sandbox:delay=5s', 'SANDBOX:fail=unknown_product', 'sandbox:delay=2 ', 'sandbox:fail=bogus_code', 'sandbox:fail=rate_limited'])(
    'refuses the malformed directive %j before any job exists',
    async (externalRef) => {
      const before = await countJobs();
      const r = await post(submission({ externalRef }));
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'validation_error', retryable: false });
      expect((r.body.error.details as { field: string }[]).map((d) => d.field)).toEqual(['externalRef']);
      expect(await countJobs()).toBe(before);
    },
  );

  it.each([
    ['unknown_product', 422, false],
    ['validation_error', 400, false],
    ['not_found', 404, false],
    ['conflict', 409, false],
    ['unavailable', 503, true],
    ['internal', 500, true],
  ])('forces %s with the status and retryable of the error table', async (code, status, retryable) => {
    const r = await post(submission({ externalRef: `sandbox:fail=${code}` }), { prefer: 'wait=10' });
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ code, retryable });
    expect(r.body.jobId).toMatch(/^job_/);
  });

  it('waits, then fails, for a combined directive', async () => {
    const started = await post(submission({ externalRef: 'sandbox:delay=2;fail=conflict' }), { prefer: 'wait=1' });
    expect(started.status).toBe(202);
    const settled = await stack.api('GET', jobPath(started.body.statusUrl), { token, headers: { prefer: 'wait=10' } });
    expect(settled.body).toMatchObject({ status: 'failed', error: { code: 'conflict', retryable: false } });
  });
});

describe('the job handle and polling', () => {
  it('answers 202 with the handle, Location and Retry-After, then the processing body, then the result', async () => {
    const r = await post(submission({ externalRef: 'sandbox:delay=2' }));
    expect(r.status).toBe(202);
    expect(Object.keys(r.body).sort()).toEqual(['id', 'status', 'statusUrl']);
    expect(r.body.status).toBe('accepted');
    expect(r.body.id).toMatch(/^job_[0-9a-f]{32}$/);
    expect(r.body.statusUrl).toBe(`https://api.uat.test/v1/jobs/${r.body.id}`);
    expect(r.headers.get('location')).toBe(r.body.statusUrl);
    expect(r.headers.get('job-id')).toBe(r.body.id);
    expect(r.headers.get('retry-after')).toBe('5');
    expect(r.headers.get('preference-applied')).toBeNull();

    const processing = await stack.api('GET', jobPath(r.body.statusUrl), { token });
    expect(processing.status).toBe(200);
    expect(processing.headers.get('retry-after')).toBe('5');
    expect(processing.body).toEqual({ id: r.body.id, status: 'processing', retryAfter: 5 });

    const done = await stack.api('GET', jobPath(r.body.statusUrl), { token, headers: { prefer: 'wait=15' } });
    expect(done.status).toBe(200);
    expect(done.headers.get('preference-applied')).toBe('wait=15');
    expect(done.headers.get('vary')).toContain('Prefer');
    expect(Object.keys(done.body).sort()).toEqual(['createdAt', 'id', 'kind', 'result', 'status', 'updatedAt']);
    expect(done.body.status).toBe('succeeded');
    // The submission as GET /v1/submissions/{id} shows it, and its receipt.
    const { receipt, ...created } = done.body.result as Record<string, unknown>;
    expect(receipt).toEqual(expect.any(String));
    expect(created).toMatchObject({ submissionName: 'Acme Holdings LLC', status: 'submitted', externalRef: 'sandbox:delay=2' });
    expect(created).toEqual((await stack.api('GET', `/v1/submissions/${created.submissionId}`, { token })).body);
    expect(done.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(done.body.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const s = await stack.api('GET', `/v1/submissions/${done.body.result.submissionId}`, { token });
    expect(s.status).toBe(200);
    expect(s.body).toEqual({
      submissionId: done.body.result.submissionId,
      submissionName: 'Acme Holdings LLC',
      status: 'submitted',
      externalRef: 'sandbox:delay=2',
      submissionType: 'application',
      effectiveDate: '2027-01-01',
      productId: PRODUCT,
      applicant: { legalName: 'Acme Holdings LLC' },
      principalId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      // A product without requirements: version 1, nothing due.
      requirements: { version: 1, currentlyDue: [] },
      clearance: done.body.result.clearance,
      // The create body had no risk data.
      risk: null,
    });
  });

  it('claims every job before its effect in ClaimJobs, without reading it (StartJob); the job is running from its claim', async () => {
    const calls = async (method: string) => (await scrape(stack.opsUrls.job!)).sum('partner_grpc_server_handled_total', { grpc_method: method });
    const startsBefore = await calls('StartJob');
    const claimsBefore = await calls('ClaimJobs');
    const quick = await post(submission(), { prefer: 'wait=10' });
    expect(quick.status).toBe(200);
    expect(await calls('ClaimJobs')).toBe(claimsBefore + 1);

    const slow = await post(submission({ externalRef: 'sandbox:delay=2' }));
    expect(slow.status).toBe(202);
    const status = async () => (await stack.sql<{ status: string; deliveries: number }>('SELECT status, deliveries FROM job.jobs WHERE job_id = $1', [slow.body.id]))[0];
    await until('the slow job is claimed', async () => (await status())?.status === 'running');
    const done = await stack.api('GET', jobPath(slow.body.statusUrl), { token, headers: { prefer: 'wait=15' } });
    expect(done.body.status).toBe('succeeded');
    expect(await calls('StartJob')).toBe(startsBefore);
    // Both count their one delivery, recorded by the claim.
    const [quickJob] = await stack.sql<{ deliveries: number }>(
      "SELECT j.deliveries FROM job.jobs j JOIN submission.submissions s ON s.job_id = j.job_id WHERE s.submission_id = $1",
      [quick.body.submissionId],
    );
    expect(quickJob!.deliveries).toBe(1);
    expect((await status())!.deliveries).toBe(1);
  });

  it('records the principal a submission was attributed to', async () => {
    await stack.admin('principal', 'add', '--partner', client.partnerId, '--principal', 'broker-1');
    const r = await post(submission(), { prefer: 'wait=10', 'x-principal-id': 'broker-1' });
    expect(r.status).toBe(200);
    const s = await stack.api('GET', `/v1/submissions/${r.body.submissionId}`, { token });
    expect(s.body.principalId).toBe('broker-1');
  });
});

describe('Prefer: wait', () => {
  it('answers 200 with the result within milliseconds of settlement, not at the next poll', async () => {
    const started = Date.now();
    const r = await post(submission({ externalRef: 'sandbox:delay=2' }), { prefer: 'wait=10' });
    const answered = Date.now();
    expect(r.status).toBe(200);
    expect(r.body.submissionName).toBe('Acme Holdings LLC');
    expect(r.headers.get('preference-applied')).toBe('wait=10');
    const [row] = await stack.sql<{ settled_at: Date; job_id: string }>('SELECT settled_at, job_id FROM job.jobs WHERE result->>\'submissionId\' = $1', [r.body.submissionId]);
    // The 200 names the job whose result it is.
    expect(r.headers.get('job-id')).toBe(row!.job_id);
    expect(answered - started).toBeGreaterThanOrEqual(2000);
    // Woken by the settlement event: generous margin (two clocks, a loaded machine), far below the
    // 5 s poll interval.
    expect(answered - row!.settled_at.getTime()).toBeLessThan(2000);
  });

  it('answers 202 at the deadline when the job outlasts the wait', async () => {
    const started = Date.now();
    const r = await post(submission({ externalRef: 'sandbox:delay=5' }), { prefer: 'wait=1' });
    const took = Date.now() - started;
    expect(r.status).toBe(202);
    expect(r.headers.get('preference-applied')).toBe('wait=1');
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(4000);
  });

  it('holds GET /v1/jobs/{id} until settlement and answers processing at its deadline', async () => {
    const r = await post(submission({ externalRef: 'sandbox:delay=3' }));
    const short = await stack.api('GET', jobPath(r.body.statusUrl), { token, headers: { prefer: 'wait=1' } });
    expect(short.body).toEqual({ id: r.body.id, status: 'processing', retryAfter: 5 });
    const long = await stack.api('GET', jobPath(r.body.statusUrl), { token, headers: { prefer: 'wait=20' } });
    expect(long.body.status).toBe('succeeded');
  });

  it('clamps N to 30 and ignores a malformed preference', async () => {
    const clamped = await post(submission(), { prefer: 'wait=100' });
    expect(clamped.status).toBe(200);
    expect(clamped.headers.get('preference-applied')).toBe('wait=30');
    const malformed = await post(submission({ externalRef: 'sandbox:delay=1' }), { prefer: 'wait=soon' });
    expect(malformed.status).toBe(202);
    expect(malformed.headers.get('preference-applied')).toBeNull();
    const several = await post(submission(), { prefer: 'respond-async, wait=10' });
    expect(several.status).toBe(200);
  });

  it('maps a job failing within the wait to an HTTP error with jobId, and GET shows the error', async () => {
    const unknown = await post(submission({ productId: randomUUID() }), { prefer: 'wait=10' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error).toMatchObject({ code: 'unknown_product', retryable: false });
    expect(unknown.body.jobId).toMatch(/^job_/);
    const inactive = await post(submission({ productId: INACTIVE }), { prefer: 'wait=10' });
    expect(inactive.status).toBe(422);
    expect(inactive.body.error.code).toBe('unknown_product');

    const job = await stack.api('GET', `/v1/jobs/${unknown.body.jobId}`, { token });
    expect(Object.keys(job.body).sort()).toEqual(['createdAt', 'error', 'id', 'kind', 'status', 'updatedAt']);
    expect(job.body.status).toBe('failed');
    expect(job.body.error).toEqual(unknown.body.error);

    const retryable = await post(submission({ externalRef: 'sandbox:fail=unavailable' }), { prefer: 'wait=10' });
    expect(retryable.status).toBe(503);
    expect(retryable.body.error).toMatchObject({ code: 'unavailable', retryable: true });
    const conflict = await post(submission({ externalRef: 'sandbox:fail=conflict' }), { prefer: 'wait=10' });
    expect(conflict.status).toBe(409);
  });

  it('costs no database query while a thousand requests wait', async () => {
    const jobId = await unpublishedJob();
    // Registered in waves of 100 (each wave waiting before the next is sent): a thousand connections
    // opened at once can overflow the listen backlog of a loaded machine (ECONNRESET), which is about
    // the kernel, not about waiting. All thousand wait at once all the same.
    const waiters: Promise<Awaited<ReturnType<typeof stack.api>>>[] = [];
    for (let wave = 1; wave <= 10; wave++) {
      for (let i = 0; i < 100; i++) waiters.push(stack.api('GET', `/v1/jobs/${jobId}`, { token, headers: { prefer: 'wait=60' } }));
      await until(`${wave * 100} requests wait`, async () => (await waiting()) >= wave * 100, 60_000);
    }
    // Counted from the moment all of them are registered and have done their one read of the job.
    const pool = stack.services.job!.pool! as unknown as { query: (...a: unknown[]) => unknown };
    const original = pool.query;
    const reads: string[] = [];
    pool.query = function (this: unknown, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string })?.text);
      if (/^\s*SELECT/i.test(text)) reads.push(text);
      return original.apply(this, args);
    };
    try {
      await new Promise((resolve) => setTimeout(resolve, 500)); // an observation window, not a synchronisation
      await settle(jobId);
      const results = await Promise.all(waiters);
      expect(results.every((x) => x.status === 200 && x.body.status === 'succeeded')).toBe(true);
    } finally {
      pool.query = original;
    }
    // No reads at all while they waited: every one was answered from the settlement event.
    expect(reads).toEqual([]);
    expect(await waiting()).toBe(0);
  });

  it('logs and counts a waited request when it is answered, with its real status and duration', async () => {
    const jobId = await unpublishedJob();
    const requestId = `waited-${randomUUID()}`;
    const labels = { route: '/v1/jobs/:id', method: 'GET', status: '200' };
    const answered = async () => {
      const m = await scrape(stack.gatewayOpsUrl);
      return { count: m.sum('partner_gateway_http_request_duration_seconds_count', labels), sum: m.sum('partner_gateway_http_request_duration_seconds_sum', labels) };
    };
    const accessLine = () =>
      stack.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request' && l.requestId === requestId);
    const before = await answered();

    const pending = stack.api('GET', `/v1/jobs/${jobId}`, { token, headers: { prefer: 'wait=30', 'x-request-id': requestId } });
    await until('the request waits', async () => (await waiting()) === 1);
    const waitingSince = Date.now();
    const meanwhile = await scrape(stack.gatewayOpsUrl);
    expect(meanwhile.sum('partner_gateway_http_requests_in_flight')).toBe(1);
    expect(meanwhile.sum('partner_gateway_http_request_duration_seconds_count', labels)).toBe(before.count);
    expect(accessLine()).toBeUndefined();

    const settling = Date.now();
    await settle(jobId);
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe(requestId);
    expect(r.headers.get('preference-applied')).toBe('wait=30');
    expect(r.body.status).toBe('succeeded');

    // Logged when answered: it began before it was seen waiting, and ended after the settling began.
    const line = accessLine()!;
    expect(line).toMatchObject({ route: '/v1/jobs/:id', method: 'GET', status: 200, clientId: client.clientId });
    expect(line.ms as number).toBeGreaterThanOrEqual(settling - waitingSince);
    const after = await answered();
    expect(after.count).toBe(before.count + 1);
    expect(after.sum - before.sum).toBeCloseTo((line.ms as number) / 1000, 2);
    const settled = await scrape(stack.gatewayOpsUrl);
    expect(settled.sum('partner_gateway_http_requests_in_flight')).toBe(0);
    expect(settled.sum('partner_gateway_waiting_requests')).toBe(0);
  });

  it('releases the waiter of a client that goes away, long before the wait would end', async () => {
    const jobId = await unpublishedJob();
    const gone = new AbortController();
    const pending = fetch(`${stack.gatewayUrl}/v1/jobs/${jobId}`, {
      headers: { authorization: `Bearer ${token}`, prefer: 'wait=30' },
      signal: gone.signal,
    }).catch((err: unknown) => err);
    await until('the request waits', async () => (await waiting()) === 1);
    gone.abort();
    expect(await pending).toBeInstanceOf(Error);
    await until('the waiter is released', async () => (await waiting()) === 0, 5_000);
    await settle(jobId);
  });
});

describe('Idempotency-Key', () => {
  it('replays the same job for the same request and refuses a different one', async () => {
    const key = randomUUID();
    const body = submission({ externalRef: 'sandbox:delay=1' });
    const first = await post(body, { 'idempotency-key': key });
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Same request, differently spelt JSON and a quoted key: still the same request.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await post(reordered, { 'idempotency-key': `"${key}"` });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const waited = await post(body, { 'idempotency-key': key, prefer: 'wait=10' });
    expect(waited.status).toBe(200);
    expect(waited.headers.get('idempotent-replayed')).toBe('true');

    const different = await post({ ...body, externalRef: 'another' }, { 'idempotency-key': key });
    expect(different.status).toBe(422);
    expect(different.body.error).toMatchObject({ code: 'idempotency_key_reused', retryable: false });
    const rows = await stack.sql('SELECT 1 FROM submission.submissions WHERE job_id = $1', [first.body.id]);
    expect(rows).toHaveLength(1);
  });

  it('creates exactly one job and one submission for 20 concurrent requests with one key', async () => {
    const key = randomUUID();
    const body = submission();
    const results = await Promise.all(Array.from({ length: 20 }, () => post(body, { 'idempotency-key': key, prefer: 'wait=10' })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.submissionId)).size).toBe(1);
    const jobs = await stack.sql("SELECT job_id FROM job.jobs WHERE payload->>'externalRef' = $1", [body.externalRef]);
    expect(jobs).toHaveLength(1);
    const subs = await stack.sql('SELECT 1 FROM submission.submissions WHERE external_ref = $1', [body.externalRef]);
    expect(subs).toHaveLength(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
  });

  it('forgets a key after its retention: the same key then starts a new job', async () => {
    const key = randomUUID();
    const first = await post(submission(), { 'idempotency-key': key });
    await stack.sql("UPDATE job.idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1", [key]);
    const later = await post(submission({ externalRef: 'a different request' }), { 'idempotency-key': key });
    expect(later.status).toBe(202);
    expect(later.body.id).not.toBe(first.body.id);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
  });

  it('scopes keys to the client: another client with the same key gets its own job', async () => {
    const key = randomUUID();
    const sibling = await stack.createClient({ tenant: client.tenant, partner: client.partnerId });
    const a = await post(submission(), { 'idempotency-key': key });
    const b = await post(submission(), { 'idempotency-key': key }, await stack.token(sibling));
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it('creates a new job for every request without a key', async () => {
    const body = submission();
    const a = await post(body);
    const b = await post(body);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['badly quoted', '"abc'],
    ['non-printable', 'caf\u00e9'],
  ])('refuses a %s key with 400 validation_error', async (_name, key) => {
    const r = await stack.api('POST', '/v1/submissions', {
      token,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: Buffer.from(JSON.stringify(submission())) as unknown as BodyInit,
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_error');
  });
});

describe('isolation', () => {
  it("answers another partner's job and submission with 404, as for unknown and malformed ids", async () => {
    const r = await post(submission(), { prefer: 'wait=10' });
    expect(r.status).toBe(200);
    const [job] = await stack.sql<{ job_id: string }>("SELECT job_id FROM job.jobs WHERE result->>'submissionId' = $1", [r.body.submissionId]);
    const stranger = await stack.token(await stack.createClient());
    const sameTenant = await stack.token(await stack.createClient({ tenant: client.tenant }));
    for (const t of [stranger, sameTenant]) {
      for (const path of [`/v1/jobs/${job!.job_id}`, `/v1/submissions/${r.body.submissionId}`]) {
        const res = await stack.api('GET', path, { token: t, headers: { prefer: 'wait=1' } });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    }
    for (const path of ['/v1/jobs/job_nope', `/v1/jobs/job_${'0'.repeat(32)}`, '/v1/submissions/123', `/v1/submissions/${randomUUID()}`]) {
      expect((await stack.api('GET', path, { token })).status).toBe(404);
    }
  });
});
