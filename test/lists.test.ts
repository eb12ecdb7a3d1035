// Reconciliation lists through the whole system (HTTP → gateway → gRPC → job and submission
// services → PostgreSQL): GET /v1/jobs and GET /v1/submissions — item shapes (settled jobs exactly as
// GET /v1/jobs/{id}, unsettled ones as `processing`; submissions exactly as GET /v1/submissions/{id}),
// filters, keyset paging while items are inserted, partner and tenant isolation (foreign cursors
// refused), bad input, and a lost job handle found again by externalRef.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient, serviceDefs } from '@partner/shared/grpc';
import { newJobId } from '@partner/shared/domain/ids';
import { PartnerClient } from '../sdk/client/src/index.js';
import { ROOT, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { PRODUCT, submissionBody } from './support/fixtures.js';
import { until } from './support/poll.js';

type Item = Record<string, unknown> & { createdAt: string };
const UNKNOWN_PRODUCT = '11111111-2222-4333-8444-999999999999';

// a and b: two partners of one tenant; c: a partner of another tenant with the SAME partner id as a.
let a: ClientCreds, b: ClientCreds, c: ClientCreds;
let ta: string, tb: string, tc: string;
const tenant1 = `t1-${Date.now().toString(36)}`;
const tenant2 = `t2-${Date.now().toString(36)}`;

const stack = useStack(async (stack) => {
  await stack.startAll();
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test product');
  [a, b, c] = await Promise.all([
    stack.createClient({ tenant: tenant1, partner: 'partner-a' }),
    stack.createClient({ tenant: tenant1, partner: 'partner-b' }),
    stack.createClient({ tenant: tenant2, partner: 'partner-a' }),
  ]);
  [ta, tb, tc] = await Promise.all([stack.token(a), stack.token(b), stack.token(c)]);
});

const get = (path: string, token = ta) => stack.api('GET', path, { token });

/** Creates a submission and waits for its job: the job id and the response. */
async function create(token: string, body: Record<string, unknown> = submissionBody(), headers: Record<string, string> = {}) {
  const r = await stack.api('POST', '/v1/submissions', { token, json: body, headers: { prefer: 'wait=15', ...headers } });
  if (r.status === 202) throw new Error('the job did not settle within the wait');
  return r;
}

/** A job the partner owns that no worker will run (never published): it stays unsettled until settled here. */
async function unsettledJob(owner: ClientCreds): Promise<string> {
  const jobId = newJobId();
  await stack.sql(
    `INSERT INTO job.jobs (job_id, kind, tenant_id, partner_id, client_id, payload, status) VALUES ($1, 'submission.create', $2, $3, $4, '{}', 'accepted')`,
    [jobId, owner.tenant, owner.partnerId, owner.clientId],
  );
  return jobId;
}

/** Follows nextCursor to the end; `between` runs after each page (to insert while paging). */
async function walk(path: string, query: string, token: string, between: (page: number) => Promise<void> = async () => undefined) {
  const items: Item[] = [];
  let cursor: string | null = '';
  let pages = 0;
  while (cursor !== null) {
    const sep = query ? '&' : '';
    const r = await get(`${path}?${query}${sep}cursor=${encodeURIComponent(cursor)}`, token);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    items.push(...(r.body.items as Item[]));
    cursor = r.body.nextCursor as string | null;
    pages++;
    if (cursor !== null) await between(pages);
  }
  return { items, pages };
}

function expectNewestFirst(items: Item[], idOf: (i: Item) => string): void {
  for (let i = 1; i < items.length; i++) {
    const [prev, cur] = [items[i - 1]!, items[i]!];
    const ordered = prev.createdAt > cur.createdAt || (prev.createdAt === cur.createdAt && idOf(prev) > idOf(cur));
    expect(ordered, `items ${i - 1} and ${i} out of order`).toBe(true);
  }
}

describe('GET /v1/jobs', () => {
  let succeeded: string, failed: string, processing: string;

  beforeAll(async () => {
    const accepted = await stack.api('POST', '/v1/submissions', { token: ta, json: submissionBody() });
    succeeded = accepted.body.id as string;
    const settled = await stack.api('GET', `/v1/jobs/${succeeded}`, { token: ta, headers: { prefer: 'wait=15' } });
    expect(settled.body.status).toBe('succeeded');
    const bad = await create(ta, { ...submissionBody(), productId: UNKNOWN_PRODUCT });
    expect(bad.status).toBe(422);
    failed = bad.body.jobId as string;
    processing = await unsettledJob(a);
  });

  it('shows the kind on GET /v1/jobs/{id} of a settled job, succeeded or failed', async () => {
    const ok = await get(`/v1/jobs/${succeeded}`);
    expect(Object.keys(ok.body).sort()).toEqual(['createdAt', 'id', 'kind', 'result', 'status', 'updatedAt']);
    expect(ok.body.kind).toBe('submission.create');
    const ko = await get(`/v1/jobs/${failed}`);
    expect(Object.keys(ko.body).sort()).toEqual(['createdAt', 'error', 'id', 'kind', 'status', 'updatedAt']);
    expect(ko.body).toMatchObject({ kind: 'submission.create', status: 'failed', error: { code: 'unknown_product' } });
    // The processing body of GET /v1/jobs/{id} stays as the contract gives it.
    expect(Object.keys((await get(`/v1/jobs/${processing}`)).body).sort()).toEqual(['id', 'retryAfter', 'status']);
  });

  it('lists settled jobs exactly as GET /v1/jobs/{id} shows them, unsettled ones as processing with their times', async () => {
    const { items } = await walk('/v1/jobs', 'limit=200', ta);
    const byId = new Map(items.map((i) => [i.id as string, i]));
    for (const id of [succeeded, failed]) expect(byId.get(id)).toEqual((await get(`/v1/jobs/${id}`)).body);
    const row = (await stack.sql<{ created_at: Date; updated_at: Date }>('SELECT created_at, updated_at FROM job.jobs WHERE job_id = $1', [processing]))[0]!;
    expect(byId.get(processing)).toEqual({
      id: processing,
      kind: 'submission.create',
      status: 'processing',
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    });
    expectNewestFirst(items, (i) => i.id as string);
  });

  it('filters by status (processing = not settled), kind and creation time', async () => {
    const ids = async (query: string) => (await walk('/v1/jobs', query, ta)).items.map((i) => i.id as string);
    const processingIds = await ids('status=processing');
    expect(processingIds).toContain(processing);
    expect(processingIds).not.toContain(succeeded);
    const succeededIds = await ids('status=succeeded');
    expect(succeededIds).toContain(succeeded);
    expect(succeededIds).not.toContain(failed);
    expect(succeededIds).not.toContain(processing);
    expect(await ids('status=failed')).toEqual(expect.arrayContaining([failed]));
    expect((await ids('status=failed')).every((id) => id !== succeeded)).toBe(true);
    expect(await ids('kind=attachment.create')).toEqual([]);
    expect(await ids('kind=submission.create')).toEqual(expect.arrayContaining([succeeded, failed, processing]));

    // createdSince is inclusive, createdBefore exclusive, at millisecond precision, any zone.
    const job = (await get(`/v1/jobs/${failed}`)).body as Item;
    const at = job.createdAt;
    expect(await ids(`createdSince=${at}&createdBefore=${new Date(Date.parse(at) + 1).toISOString()}`)).toEqual([failed]);
    expect(await ids(`createdBefore=${at}`)).not.toContain(failed);
    const later = new Date(Date.parse(at) + 1).toISOString();
    expect(await ids(`createdSince=${later}`)).not.toContain(failed);
    // The same instant written in +01:00.
    const sameInstant = new Date(Date.parse(at) + 3_600_000).toISOString().replace('Z', '+01:00');
    expect(await ids(`createdSince=${encodeURIComponent(sameInstant)}&createdBefore=${later}`)).toEqual([failed]);
  });

  it('shows a job that settles between two reads in its settled shape', async () => {
    const jobId = await unsettledJob(a);
    expect((await walk('/v1/jobs', 'status=processing', ta)).items.map((i) => i.id)).toContain(jobId);
    const jobs = createClient(serviceDefs().job, stack.env.JOB_GRPC_ADDR!, 5_000);
    try {
      await jobs.SettleJob({ jobId, error: { code: 'conflict', message: 'settled by the test', retryable: false } });
    } finally {
      jobs.close();
    }
    expect((await walk('/v1/jobs', 'status=processing', ta)).items.map((i) => i.id)).not.toContain(jobId);
    const item = (await walk('/v1/jobs', 'status=failed', ta)).items.find((i) => i.id === jobId);
    expect(item).toEqual((await get(`/v1/jobs/${jobId}`)).body);
  });
});

describe('GET /v1/submissions', () => {
  it('lists submissions exactly as GET /v1/submissions/{id} shows them, newest first', async () => {
    const created = [await create(ta), await create(ta)];
    const { items } = await walk('/v1/submissions', 'limit=200', ta);
    for (const r of created) {
      const id = r.body.submissionId as string;
      expect(items.find((i) => i.submissionId === id)).toEqual((await get(`/v1/submissions/${id}`)).body);
    }
    expectNewestFirst(items, (i) => i.submissionId as string);
  });

  it('filters by exact externalRef, status, createdSince, updatedSince and principalId', async () => {
    const ref = `REF-${randomUUID()}`;
    const one = await create(ta, submissionBody(ref));
    await create(ta, submissionBody(`${ref}-suffix`));
    await create(ta, submissionBody(ref.toLowerCase()));
    const ids = async (query: string) => (await walk('/v1/submissions', query, ta)).items.map((i) => i.submissionId as string);
    expect(await ids(`externalRef=${encodeURIComponent(ref)}`)).toEqual([one.body.submissionId]);
    expect(await ids(`externalRef=${encodeURIComponent(ref)}&status=submitted`)).toEqual([one.body.submissionId]);

    const record = (await get(`/v1/submissions/${one.body.submissionId as string}`)).body as Item & { updatedAt: string };
    const since = await ids(`createdSince=${record.createdAt}`);
    expect(since).toContain(one.body.submissionId);
    expect(await ids(`createdSince=${new Date(Date.parse(record.createdAt) + 1).toISOString()}`)).not.toContain(one.body.submissionId);
    expect(await ids(`updatedSince=${record.updatedAt}`)).toContain(one.body.submissionId);
    expect(await ids(`updatedSince=${new Date(Date.parse(record.updatedAt) + 1).toISOString()}`)).not.toContain(one.body.submissionId);

    await stack.admin('principal', 'add', '--partner', a.partnerId, '--tenant', a.tenant, '--principal', 'broker-lists');
    const attributed = await create(ta, submissionBody(), { 'x-principal-id': 'broker-lists' });
    expect(await ids('principalId=broker-lists')).toEqual([attributed.body.submissionId]);
    expect(await ids('principalId=nobody-here')).toEqual([]);
  });

  it('finds a lost job handle again by externalRef', async () => {
    const ref = `lost-${randomUUID()}`;
    // The client sends the request and loses the answer (a crash, a dropped connection).
    await stack.api('POST', '/v1/submissions', { token: ta, json: submissionBody(ref) });
    let found: Item | undefined;
    await until('the submission is listed under its externalRef', async () => {
      const r = await get(`/v1/submissions?externalRef=${encodeURIComponent(ref)}`);
      found = (r.body.items as Item[])[0];
      return found !== undefined;
    });
    expect(found).toMatchObject({ externalRef: ref, status: 'submitted' });
    expect(found).toEqual((await get(`/v1/submissions/${found!.submissionId as string}`)).body);
    // And its job, succeeded, among the partner's recent submission jobs.
    const jobs = (await walk('/v1/jobs', `kind=submission.create&status=succeeded&createdSince=${new Date(Date.parse(found!.createdAt) - 60_000).toISOString()}`, ta)).items;
    expect(jobs.some((j) => (j.result as { submissionId?: string }).submissionId === found!.submissionId)).toBe(true);
  });
});

describe('paging while items are inserted', () => {
  it('returns every submission and job that existed when the walk began exactly once, newest first', async () => {
    const d = await stack.createClient({ tenant: tenant1, partner: `partner-d-${randomUUID().slice(0, 8)}` });
    const td = await stack.token(d);
    const before = [];
    for (let i = 0; i < 5; i++) before.push(...(await Promise.all(Array.from({ length: 5 }, () => create(td)))));
    const existing = new Set(before.map((r) => r.body.submissionId as string));
    expect(existing.size).toBe(25);
    const existingJobs = new Set((await walk('/v1/jobs', 'limit=200', td)).items.map((j) => j.id as string));
    expect(existingJobs.size).toBe(25);

    // Two new submissions (and their jobs) between every two pages: 2 x 6 page turns.
    const insert = async () => void (await Promise.all([create(td), create(td)]));
    const subs = await walk('/v1/submissions', 'limit=4', td, insert);
    const subIds = subs.items.map((i) => i.submissionId as string);
    expect(new Set(subIds).size, 'no submission twice').toBe(subIds.length);
    expect(subIds.filter((id) => existing.has(id))).toHaveLength(25);
    expectNewestFirst(subs.items, (i) => i.submissionId as string);

    const jobs = await walk('/v1/jobs', 'limit=4', td, insert);
    const jobIds = jobs.items.map((i) => i.id as string);
    expect(new Set(jobIds).size, 'no job twice').toBe(jobIds.length);
    expect(jobIds.filter((id) => existingJobs.has(id))).toHaveLength(25);
    expectNewestFirst(jobs.items, (i) => i.id as string);
  });

  it('ends with nextCursor null, and a cursor keeps working with another limit', async () => {
    const first = await get('/v1/submissions?limit=1');
    expect(first.body.items).toHaveLength(1);
    expect(typeof first.body.nextCursor).toBe('string');
    const next = await get(`/v1/submissions?limit=2&cursor=${first.body.nextCursor as string}`);
    expect(next.status).toBe(200);
    expect((next.body.items as Item[]).map((i) => i.submissionId)).not.toContain((first.body.items as Item[])[0]!.submissionId);
    const all = await get('/v1/submissions?limit=200');
    expect(all.body.nextCursor).toBeNull();
  });
});

describe('isolation', () => {
  it("never lists another partner's or another tenant's jobs and submissions", async () => {
    await Promise.all([create(tb), create(tc)]);
    const [subsA, subsB, subsC] = await Promise.all([ta, tb, tc].map((t) => walk('/v1/submissions', 'limit=200', t)));
    const [jobsA, jobsB, jobsC] = await Promise.all([ta, tb, tc].map((t) => walk('/v1/jobs', 'limit=200', t)));
    const idsA = new Set([...subsA!.items.map((i) => i.submissionId), ...jobsA!.items.map((i) => i.id)]);
    for (const other of [subsB!, subsC!, jobsB!, jobsC!]) {
      expect(other.items.length).toBeGreaterThan(0);
      for (const i of other.items) expect(idsA.has(i.submissionId ?? i.id)).toBe(false);
    }
    const inDb = await stack.sql<{ n: string }>('SELECT count(*) AS n FROM submission.submissions WHERE tenant_id = $1 AND partner_id = $2', [b.tenant, b.partnerId]);
    expect(subsB!.items).toHaveLength(Number(inDb[0]!.n));
  });

  it("refuses another partner's cursor, a cursor with other filters and a cursor of the other list", async () => {
    const subs = await get('/v1/submissions?limit=1');
    const jobs = await get('/v1/jobs?limit=1');
    const [subCursor, jobCursor] = [subs.body.nextCursor as string, jobs.body.nextCursor as string];
    expect(subCursor && jobCursor).toBeTruthy();
    for (const [path, token] of [
      [`/v1/submissions?limit=1&cursor=${subCursor}`, tb],
      [`/v1/submissions?limit=1&cursor=${subCursor}`, tc],
      [`/v1/submissions?status=submitted&cursor=${subCursor}`, ta],
      [`/v1/jobs?cursor=${subCursor}`, ta],
      [`/v1/jobs?cursor=${jobCursor}`, tb],
      [`/v1/jobs?status=succeeded&cursor=${jobCursor}`, ta],
      [`/v1/submissions?cursor=${jobCursor}`, ta],
      [`/v1/policies?cursor=${jobCursor}`, ta],
    ] as const) {
      const r = await get(path, token);
      expect(r.status, path).toBe(400);
      expect(r.body.error.details).toEqual([{ field: 'cursor', issue: expect.any(String) }]);
    }
  });

  it('needs jobs/read and submissions/read', async () => {
    const t = await stack.token(await stack.createClient({ permissions: ['health/read'] }));
    for (const path of ['/v1/jobs', '/v1/submissions']) {
      const r = await get(path, t);
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('forbidden');
    }
  });
});

describe('bad input', () => {
  const fields = async (path: string) => {
    const r = await get(path);
    expect(r.status, path).toBe(400);
    expect(r.body.error.code).toBe('validation_error');
    return (r.body.error.details as { field: string }[]).map((d) => d.field).sort();
  };

  it.each([
    ['/v1/jobs?limit=0', ['limit']],
    ['/v1/jobs?limit=201', ['limit']],
    ['/v1/jobs?limit=ten', ['limit']],
    ['/v1/jobs?status=settled&kind=policy.create', ['kind', 'status']],
    ['/v1/jobs?createdSince=yesterday&createdBefore=2025-01-31T00:00:00', ['createdBefore', 'createdSince']],
    ['/v1/jobs?createdSince=2025-01-31T00:00:00+01:00', ['createdSince']],
    ['/v1/jobs?createdSince=0000-12-31T00:00:00Z&createdBefore=9999-12-31T23:59:59-01:00', ['createdBefore', 'createdSince']],
    ['/v1/jobs?createdSince=2025-02-30T00:00:00Z', ['createdSince']],
    ['/v1/jobs?status=failed&status=succeeded&since=x', ['since', 'status']],
    ['/v1/jobs?cursor=garbled&limit=300', ['cursor', 'limit']],
    ['/v1/jobs?cursor=AQAAAZqj5HwAAZmj43wde1KaDj8tTFtqcWOlLwNsNk6g1u1Vh9Hrkg4', ['cursor']],
    ['/v1/submissions?externalRef=&status=open', ['externalRef', 'status']],
    [`/v1/submissions?externalRef=${'x'.repeat(201)}`, ['externalRef']],
    ['/v1/submissions?principalId=%20bad&updatedSince=2025&createdSince=now', ['createdSince', 'principalId', 'updatedSince']],
    ['/v1/submissions?externalRef=a&externalRef=b&kind=submission.create', ['externalRef', 'kind']],
    ['/v1/submissions?limit=-1&cursor=!!', ['cursor', 'limit']],
  ])('%s is 400 naming %j', async (path, expected) => {
    expect(await fields(path)).toEqual(expected);
  });

  it('accepts an offset written as %2B and an empty cursor as the first page', async () => {
    expect((await get('/v1/jobs?createdSince=2025-01-31T00:00:00%2B01:00&cursor=')).status).toBe(200);
    expect((await get('/v1/submissions?updatedSince=2025-01-31T00:00:00.123456-05:30&cursor=')).status).toBe(200);
  });
});

describe('SDK and CLI', () => {
  const sdk = (creds: ClientCreds) =>
    new PartnerClient({ baseUrl: stack.gatewayUrl, authUrl: stack.authUrl, clientId: creds.clientId, clientSecret: creds.clientSecret, scope: stack.scope });

  it('iterateSubmissions and iterateJobs follow nextCursor to the end', async () => {
    const e = await stack.createClient({ tenant: tenant1, partner: `partner-e-${randomUUID().slice(0, 8)}` });
    const te = await stack.token(e);
    const refs = Array.from({ length: 5 }, () => `sdk-${randomUUID()}`);
    const created = await Promise.all(refs.map((ref) => create(te, submissionBody(ref))));
    const api = sdk(e);
    const subs = [];
    for await (const s of api.iterateSubmissions({ limit: 2 })) subs.push(s.submissionId);
    expect(subs.sort()).toEqual(created.map((r) => r.body.submissionId as string).sort());
    const jobs = [];
    for await (const j of api.iterateJobs({ limit: 2, status: 'succeeded', kind: 'submission.create' })) jobs.push(j);
    expect(jobs).toHaveLength(5);
    expect(jobs.every((j) => j.kind === 'submission.create' && j.status === 'succeeded')).toBe(true);
    const page = await api.listSubmissions({ externalRef: refs[0] });
    expect(page).toEqual({ items: [expect.objectContaining({ submissionId: created[0]!.body.submissionId })], nextCursor: null });
  });

  it('partner submissions list --external-ref finds the submission; partner jobs list lists the jobs', async () => {
    await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['-b', 'sdk/cli'], { cwd: ROOT });
    const ref = `cli-lost-${randomUUID()}`;
    const made = await create(ta, submissionBody(ref));
    await create(ta); // at least two succeeded jobs, so one page of one has a next
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: ROOT,
      XDG_CONFIG_HOME: join(ROOT, 'no-such-config-dir'),
      PARTNER_BASE_URL: stack.gatewayUrl,
      PARTNER_AUTH_URL: stack.authUrl,
      PARTNER_CLIENT_ID: a.clientId,
      PARTNER_CLIENT_SECRET: a.clientSecret,
      PARTNER_SCOPE: stack.scope,
    };
    const cli = (...args: string[]) => promisify(execFile)(process.execPath, [join(ROOT, 'sdk/cli/dist/main.js'), ...args], { env });
    const subs = JSON.parse((await cli('submissions', 'list', '--external-ref', ref)).stdout) as { items: Item[]; nextCursor: null };
    expect(subs.items.map((i) => i.submissionId)).toEqual([made.body.submissionId]);
    const jobs = JSON.parse((await cli('jobs', 'list', '--status', 'succeeded', '--limit', '1')).stdout) as { items: Item[]; nextCursor: string };
    expect(jobs.items).toHaveLength(1);
    expect(jobs.items[0]).toMatchObject({ kind: expect.any(String), status: 'succeeded' });
    expect(typeof jobs.nextCursor).toBe('string');
  });
});
