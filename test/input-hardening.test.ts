// The breaks a hostile probe found in input handling (issue 19), each shown closed against the real
// stack: text with NUL, control characters or lone surrogates, and dates or timestamps outside years
// 0001–9999, are refused at the edge with 400 validation_error naming the field, on every route,
// and nothing is queued; a job whose own input fails in a service fails at once, not retryable,
// without burning deliveries. And those of issue 36: JSON bodies nested too deep, holding too many
// values or repeating a key are 400 invalid_json naming the limit (not a 500 from a stack overflow);
// a path with a trailing slash is an unknown path (404), and eventTypes' schema refuses what the
// route refuses.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import { createClient, serviceDefs } from '@partner/shared/grpc';
import { newJobId } from '@partner/shared/domain/ids';
import { type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { PRODUCT } from './support/fixtures.js';
import { until } from './support/poll.js';
import { RESOURCES } from '../services/gateway/src/resources/index.js';
import type { RouteDeps } from '../services/gateway/src/resources/deps.js';
import type { GatewayState } from '../services/gateway/src/context.js';

let client: ClientCreds;
let token: string;
const MAX_VALUES = 5_000;

const submission = (over: Record<string, unknown> = {}, applicant: Record<string, unknown> = {}) => ({
  externalRef: `ref-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: PRODUCT,
  applicant: { legalName: 'Acme Holdings LLC', ...applicant },
  ...over,
});

const jobCount = async (): Promise<number> =>
  Number((await stack.sql<{ n: string }>('SELECT count(*) AS n FROM job.jobs WHERE tenant_id = $1', [client.tenant]))[0]!.n);

const stack = useStack(async (stack) => {
  // A values limit other than the default: the setting is the one applied (and documented).
  await stack.startAll({ WORKER_BACKOFF_MS: '200', WORKER_MAX_DELIVERIES: '5', JSON_MAX_VALUES: String(MAX_VALUES) });
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Hardening product');
  client = await stack.createClient();
  token = await stack.token(client);
});

describe('text in request bodies and query strings', () => {
  it.each([
    ['externalRef', submission({ externalRef: 'a\u0000b' })],
    ['applicant.legalName', submission({}, { legalName: 'Acme\u0000Corp' })],
    ['applicant.legalName', submission({}, { legalName: 'Acme \ud800' })],
    ['externalRef', submission({ externalRef: '\udc00ref' })],
    ['externalRef', submission({ externalRef: 'bell\u0007' })],
    ['applicant.legalName', submission({}, { legalName: 'new\nline' })],
  ])('refuses %s with NUL, a control character or a lone surrogate: 400 naming it, nothing queued', async (field, body) => {
    const before = await jobCount();
    for (const prefer of [undefined, 'wait=5']) {
      const r = await stack.api('POST', '/v1/submissions', { token, json: body, headers: prefer ? { prefer } : {} });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'validation_error', retryable: false });
      expect(r.body.error.details).toContainEqual(expect.objectContaining({ field }));
    }
    expect(await jobCount()).toBe(before);
  });

  it('refuses a name made only of spaces or invisible characters', async () => {
    for (const legalName of ['\u200b', '\u200b\u200c\u200d\ufeff', ' \u00ad ', '\u2060']) {
      const r = await stack.api('POST', '/v1/submissions', { token, json: submission({}, { legalName }) });
      expect(r.status, JSON.stringify(legalName)).toBe(400);
      expect(r.body.error.details).toContainEqual({ field: 'applicant.legalName', issue: expect.stringMatching(/visible character/) });
    }
    // An empty name is one problem, said once and the friendly way (not also the validator's "fewer than 1 characters").
    const empty = await stack.api('POST', '/v1/submissions', { token, json: submission({}, { legalName: '' }) });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details).toEqual([{ field: 'applicant.legalName', issue: 'must contain a visible character (not only spaces or invisible characters)' }]);
    // A visible name with a zero-width joiner inside (as in some scripts and emoji) is fine.
    const ok = await stack.api('POST', '/v1/submissions', { token, json: submission({}, { legalName: 'Acme\u200dCo' }) });
    expect(ok.status).toBe(202);
  });

  it('refuses a NUL or control character in any query parameter of any route', async () => {
    const me = await stack.api('GET', '/v1/health', { token });
    expect(me.status).toBe(200);
    for (const path of ['/v1/health?x=a%00b', '/v1/policies?policyNumber=P%00', '/v1/policies?status=%01', `/v1/jobs/${newJobId()}?q=%1b`, '/v1/policies?a%00=1']) {
      const r = await stack.api('GET', path, { token });
      expect(r.status, path).toBe(400);
      expect(r.body.error.code).toBe('validation_error');
      expect(r.body.error.details.length).toBeGreaterThan(0);
    }
  });
});

describe('dates and timestamps', () => {
  it.each(['0000-01-01', '0000-12-31', '10000-01-01', '-0001-01-01'])('refuses effectiveDate %s at the edge: 400, nothing queued', async (effectiveDate) => {
    const before = await jobCount();
    const r = await stack.api('POST', '/v1/submissions', { token, json: submission({ effectiveDate }), headers: { prefer: 'wait=5' } });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toContainEqual(expect.objectContaining({ field: 'effectiveDate' }));
    expect(await jobCount()).toBe(before);
  });

  it('accepts the first and last representable dates', async () => {
    for (const effectiveDate of ['0001-01-01', '9999-12-31']) {
      const r = await stack.api('POST', '/v1/submissions', { token, json: submission({ effectiveDate }), headers: { prefer: 'wait=10' } });
      expect(r.status, effectiveDate).toBe(200);
    }
  });

  it.each(['9999-12-31T23:59:59-23:59', '9999-12-31T23:30:00-01:00', '0001-01-01T00:00:00%2B00:01', '0000-06-01T00:00:00Z'])(
    'refuses updatedSince=%s (outside years 0001–9999 once its offset is applied) with 400',
    async (value) => {
      const r = await stack.api('GET', `/v1/policies?updatedSince=${value}`, { token });
      expect(r.status).toBe(400);
      expect(r.body.error.details).toEqual([expect.objectContaining({ field: 'updatedSince' })]);
    },
  );

  it('accepts the edges of the range', async () => {
    for (const value of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '0001-01-01T10:00:00%2B09:59']) {
      const r = await stack.api('GET', `/v1/policies?updatedSince=${value}`, { token });
      expect(r.status, value).toBe(200);
    }
  });
});

describe('a job that fails on its own input', () => {
  // Straight to the job service, past the gateway's checks: what the worker does when the input
  // fails deep down (here: a date PostgreSQL cannot store; a payload the handler cannot read).
  const submitDirect = async (payload: unknown): Promise<string> => {
    const jobs = createClient(serviceDefs().job, stack.env.JOB_GRPC_ADDR!, 5_000);
    try {
      const jobId = newJobId();
      await jobs.SubmitJob({
        jobId,
        kind: 'submission.create',
        caller: { tenantId: client.tenant, partnerId: client.partnerId, clientId: client.clientId, principalId: '' },
        payloadJson: JSON.stringify(payload),
      });
      return jobId;
    } finally {
      jobs.close();
    }
  };
  const settled = async (jobId: string) => {
    let row: { status: string; error: { code: string; retryable: boolean } | null; deliveries: number } | undefined;
    await until(`job ${jobId} settled`, async () => {
      [row] = await stack.sql<NonNullable<typeof row>>('SELECT status, error, deliveries FROM job.jobs WHERE job_id = $1', [jobId]);
      return row?.status === 'succeeded' || row?.status === 'failed';
    });
    return row!;
  };

  it('fails at once, not retryable, on its first delivery', async () => {
    const outOfRange = await submitDirect(submission({ effectiveDate: '0000-01-01' }));
    const unreadable = await submitDirect({ externalRef: 'no applicant', submissionType: 'application', effectiveDate: '2027-01-01', productId: PRODUCT });
    const a = await settled(outOfRange);
    expect(a).toMatchObject({ status: 'failed', error: { code: 'validation_error', retryable: false } });
    expect(a.deliveries).toBeLessThanOrEqual(1);
    const b = await settled(unreadable);
    expect(b).toMatchObject({ status: 'failed', error: { code: 'internal', retryable: false } });
    expect(b.deliveries).toBeLessThanOrEqual(1);
    // What the partner sees on the job.
    const r = await stack.api('GET', `/v1/jobs/${outOfRange}`, { token });
    expect(r.body).toMatchObject({ status: 'failed', error: { code: 'validation_error', retryable: false } });
  });
});

describe('JSON bodies: depth, size in values, repeated keys', () => {
  const post = (path: string, text: string) => stack.api('POST', path, { token, body: text, headers: { 'content-type': 'application/json' } });
  const nest = (depth: number, inner = '1') => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
  const valid = () => JSON.stringify(submission()).slice(0, -1);
  const expectInvalidJson = (r: Awaited<ReturnType<typeof post>>, message: RegExp) => {
    expect(r.status, r.text.slice(0, 300)).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_json', retryable: false, message: expect.stringMatching(message) });
  };

  it('refuses a body nested 33 levels deep naming the limit, and lets one of 32 reach validation', async () => {
    const before = await jobCount();
    // A field holding 32 levels sits 33 deep in the body.
    expectInvalidJson(await post('/v1/submissions', `${valid()},"extra":${nest(32)}}`), /deeper than 32 levels/);
    expectInvalidJson(await post('/v1/submissions', nest(33)), /deeper than 32 levels/);
    expectInvalidJson(await post('/v1/webhook-endpoints', `{"url":"https://hooks.example.com/x","eventTypes":${'['.repeat(32)}"*"${']'.repeat(32)}}`), /deeper than 32 levels/);
    // 32 levels in all: past the scan, refused by the schema for what it is (an unknown field).
    const ok = await post('/v1/submissions', `${valid()},"extra":${nest(31)}}`);
    expect(ok.status).toBe(400);
    expect(ok.body.error.code).toBe('validation_error');
    expect(ok.body.error.details).toContainEqual({ field: 'extra', issue: 'is not a known field' });
    expect(await jobCount()).toBe(before);
  });

  it('answers {"a": x 8,000 (48 KB) with 400 invalid_json, not a 500, on every JSON route', async () => {
    const body = nest(8000);
    expect(body.length).toBe(48_001);
    for (const path of ['/v1/submissions', '/v1/webhook-endpoints', `/v1/webhook-endpoints/we_${'0'.repeat(32)}/recover`]) {
      expectInvalidJson(await post(path, body), /deeper than 32 levels/);
    }
    const patch = await stack.api('PATCH', `/v1/webhook-endpoints/we_${'0'.repeat(32)}`, { token, body, headers: { 'content-type': 'application/json' } });
    expectInvalidJson(patch, /deeper than 32 levels/);
    // Unterminated, too.
    expectInvalidJson(await post('/v1/submissions', '{"a":'.repeat(8000)), /deeper than 32 levels/);
  });

  it(`refuses a body of more than JSON_MAX_VALUES (${MAX_VALUES}) values naming the limit: a 200,000-element array`, async () => {
    const before = await jobCount();
    const array = `[${new Array(200_000).fill('0').join(',')}]`;
    expect(array.length).toBeGreaterThan(400_000);
    expectInvalidJson(await post('/v1/submissions', array), new RegExp(`more than ${MAX_VALUES} values`));
    expectInvalidJson(await post('/v1/submissions', `${valid()},"externalRef":${array}}`.replace('"externalRef":"', '"x":"')), /more than 5000 values/);
    // Just within the limit: the scan lets it through to the schema.
    const within = await post('/v1/submissions', `${valid()},"extra":[${new Array(MAX_VALUES - 20).fill('0').join(',')}]}`);
    expect(within.status).toBe(400);
    expect(within.body.error.code).toBe('validation_error');
    expect(await jobCount()).toBe(before);
    // The served reference states this deployment's limit.
    const doc = await stack.api('GET', '/v1/openapi.json');
    expect(doc.body.info.description).toContain('more than 5,000 values');
  });

  it.each([
    ['the same key twice at the top', () => `{"url":"https://hooks.example.com/a","url":"https://hooks.example.com/b","eventTypes":["*"]}`, '/v1/webhook-endpoints', 'url'],
    ['a key and its escaped spelling', () => `{"url":"https://hooks.example.com/a","\\u0075rl":"http://127.0.0.1/","eventTypes":["*"]}`, '/v1/webhook-endpoints', 'url'],
    ['a nested key twice', () => `${valid().replace('"legalName":"Acme Holdings LLC"', '"legalName":"A","legalName":"B"')}}`, '/v1/submissions', 'applicant.legalName'],
    ['a top-level key twice, one escaped', () => `${valid()},"extern\\u0061lRef":"other"}`, '/v1/submissions', 'externalRef'],
  ])('refuses %s with 400 invalid_json naming its path, and queues nothing', async (_name, body, path, field) => {
    const before = await jobCount();
    const r = await post(path, body());
    expectInvalidJson(r, /repeats a key/);
    expect(r.body.error.details).toEqual([{ field, issue: expect.stringMatching(/repeats a key/) }]);
    expect(await jobCount()).toBe(before);
  });

  it('still reports text problems as validation_error naming the fields, in raw and escaped forms', async () => {
    const r = await post('/v1/submissions', `${valid().replace('"Acme Holdings LLC"', '"Acme \\ud800"')},"\\u0000k":1,"x":"del\u007f"}`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_error');
    expect(r.body.error.details).toEqual([
      { field: 'applicant.legalName', issue: expect.stringMatching(/surrogate/) },
      { field: '"\\u0000k"', issue: expect.stringMatching(/member name.*control/) },
      { field: 'x', issue: expect.stringMatching(/control/) },
    ]);
  });
});

describe('paths are matched exactly', () => {
  /** Every route the gateway registers, as METHOD and a concrete path (ids filled in). */
  const routes = (): [string, string][] => {
    const router = new Router<GatewayState>({ prefix: '/v1' });
    const deps = { config: { grpcTimeoutMs: 1000, jsonLimitBytes: 1024 }, clients: {}, waiters: {}, guard: () => async (_ctx: unknown, next: () => Promise<void>) => next() } as unknown as RouteDeps;
    for (const resource of RESOURCES) resource.routes?.(router, deps);
    const out: [string, string][] = [];
    for (const layer of router.stack) {
      for (const method of layer.methods) out.push([method, layer.path.replace(/:[A-Za-z]+/g, 'x')]);
    }
    return out;
  };

  it('answers every route with a trailing slash with 404 not_found in the envelope', async () => {
    const all = routes();
    expect(all.length).toBeGreaterThan(20);
    for (const [method, path] of all) {
      const r = await stack.api(method, `${path}/`, { token, ...(method === 'POST' || method === 'PATCH' ? { json: {} } : {}) });
      expect(r.status, `${method} ${path}/`).toBe(404);
      if (method !== 'HEAD') expect(r.body.error, `${method} ${path}/`).toMatchObject({ code: 'not_found', retryable: false });
    }
  });

  it('does not answer the list for GET /v1/submissions/, nor 405 for DELETE /v1/submissions/{id}/attachments/', async () => {
    const list = await stack.api('GET', '/v1/submissions/', { token });
    expect(list.status).toBe(404);
    expect(list.body.error.code).toBe('not_found');
    expect((await stack.api('GET', '/v1/submissions', { token })).status).toBe(200);
    const del = await stack.api('DELETE', `/v1/submissions/${randomUUID()}/attachments/`, { token });
    expect(del.status).toBe(404);
    expect(del.body.error.code).toBe('not_found');
    expect(del.headers.get('allow')).toBeNull();
  });
});

describe('eventTypes of a webhook endpoint', () => {
  it.each([[['*', 'job.failed']], [['job.failed', '*']], [['*', '*']], [[]], [['job.unknown']]])('refuses %j with 400 validation_error naming eventTypes, on create and PATCH', async (eventTypes) => {
    const before = await jobCount();
    for (const [method, path] of [['POST', '/v1/webhook-endpoints'], ['PATCH', `/v1/webhook-endpoints/we_${'0'.repeat(32)}`]] as const) {
      const r = await stack.api(method, path, { token, json: { url: 'https://hooks.example.com/x', eventTypes } });
      expect(r.status, `${method} ${JSON.stringify(eventTypes)}`).toBe(400);
      expect(r.body.error.code).toBe('validation_error');
      expect(r.body.error.details).toEqual([{ field: 'eventTypes', issue: expect.stringContaining('["*"] alone') }]);
    }
    expect(await jobCount()).toBe(before);
  });
});
