// The SDK's behaviour against a scripted fetch: typed errors, lastResponse, per-call limits, hooks,
// base URL normalisation, uploads without a type, aborting a wait, deprecation warnings.
import { describe, expect, it } from 'vitest';
import {
  JobCanceledError,
  JobNotCancelableError,
  lastResponseOf,
  PartnerAbortError,
  PartnerApiError,
  PartnerAuthError,
  PartnerClient,
  PartnerError,
  PartnerIdempotencyError,
  PartnerNetworkError,
  PartnerNotFoundError,
  PartnerPermissionError,
  PartnerRateLimitError,
  PartnerTimeoutError,
  PartnerUnavailableError,
  PartnerValidationError,
  type PartnerClientOptions,
  type RequestEvent,
  type ResponseEvent,
} from './index.js';

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | 'drop' | 'hang';

/** A fetch answering the token endpoint itself and API calls from a script, recording the URLs. */
function scripted(answers: Answer[] | ((url: URL, init: RequestInit) => Answer)) {
  const calls: { url: URL; init: RequestInit }[] = [];
  const next = (url: URL, init: RequestInit): Answer => (typeof answers === 'function' ? answers(url, init) : (answers.shift() ?? { status: 500 }));
  const fetch: typeof globalThis.fetch = async (input, init = {}) => {
    const url = new URL(String(input));
    if (url.pathname.endsWith('/oauth2/token')) {
      return Response.json({ access_token: 'tok', token_type: 'Bearer', expires_in: 3600 });
    }
    calls.push({ url, init });
    const a = next(url, init);
    if (a === 'drop') throw new TypeError('fetch failed');
    if (a === 'hang') {
      return new Promise<Response>((_, reject) => init.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error)));
    }
    const headers = { 'x-request-id': `req-${calls.length}`, ...a.headers };
    return a.body === undefined ? new Response(null, { status: a.status, headers }) : Response.json(a.body, { status: a.status, headers });
  };
  return { fetch, calls };
}

function client(fetch: typeof globalThis.fetch, opts: Partial<PartnerClientOptions> = {}) {
  return new PartnerClient({
    baseUrl: 'https://api.example.com',
    authUrl: 'https://auth.example.com',
    clientId: 'c',
    clientSecret: 's',
    scope: 'api.example.com/access',
    fetch,
    backoff: { baseMs: 1, maxMs: 2 },
    onDeprecation: () => undefined,
    ...opts,
  });
}

const err = (code: string, retryable = false) => ({ error: { code, message: code, retryable } });

describe('typed errors', () => {
  it.each([
    [401, 'invalid_token', PartnerAuthError],
    [403, 'insufficient_scope', PartnerPermissionError],
    [403, 'principal_not_registered', PartnerPermissionError],
    [429, 'rate_limited', PartnerRateLimitError],
    [400, 'validation_error', PartnerValidationError],
    [415, 'unsupported_media_type', PartnerValidationError],
    [422, 'idempotency_key_reused', PartnerIdempotencyError],
    [404, 'not_found', PartnerNotFoundError],
    [503, 'unavailable', PartnerUnavailableError],
    [422, 'unknown_product', PartnerApiError],
    [409, 'canceled', JobCanceledError],
    [409, 'job_not_cancelable', JobNotCancelableError],
  ])('%i %s is a %o', async (status, code, Class) => {
    const { fetch } = scripted(() => ({ status, body: err(code, status >= 500 || status === 429) }));
    const e = await client(fetch, { maxRetries: 0 }).getPolicy('p').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Class);
    expect(e).toBeInstanceOf(PartnerApiError);
    expect(e).toMatchObject({ status, code, requestId: expect.stringMatching(/^req-/) });
  });
});

describe('lastResponse on success', () => {
  it('carries requestId and replayed, and stays out of JSON', async () => {
    const { fetch } = scripted([{ status: 200, body: { submissionId: 's1' }, headers: { 'idempotent-replayed': 'true' } }]);
    const result = await client(fetch).createSubmission({} as never);
    expect(lastResponseOf(result)).toEqual({ status: 200, requestId: 'req-1', jobId: undefined, replayed: true });
    expect(result.lastResponse?.requestId).toBe('req-1');
    expect(JSON.parse(JSON.stringify(result))).toEqual({ submissionId: 's1' });
  });

  it('carries the jobId when the SDK followed the job', async () => {
    const { fetch } = scripted([
      { status: 202, body: { id: 'job_1', status: 'accepted', statusUrl: 'https://api.example.com/v1/jobs/job_1' }, headers: { 'retry-after': '0' } },
      { status: 200, body: { id: 'job_1', status: 'succeeded', result: { submissionId: 's1' } } },
    ]);
    const result = await client(fetch).createSubmission({} as never);
    expect(result.lastResponse).toEqual({ status: 200, requestId: 'req-2', jobId: 'job_1', replayed: false });
  });
});

describe('per-call limits', () => {
  it('maxRetries bounds the attempts of one call', async () => {
    const { fetch, calls } = scripted(() => ({ status: 503, body: err('unavailable', true), headers: { 'retry-after': '0' } }));
    const api = client(fetch, { maxRetries: 5 });
    await expect(api.getPolicy('p', { maxRetries: 1 })).rejects.toBeInstanceOf(PartnerUnavailableError);
    expect(calls).toHaveLength(2);
    await expect(api.getPolicy('p', { maxRetries: 0 })).rejects.toBeInstanceOf(PartnerUnavailableError);
    expect(calls).toHaveLength(3);
  });

  it('timeoutMs ends a read that does not answer with a PartnerNetworkError', async () => {
    const { fetch } = scripted(() => 'hang');
    const started = Date.now();
    const e = await client(fetch).getPolicy('p', { timeoutMs: 100 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PartnerNetworkError);
    expect((e as Error).message).toMatch(/within 100 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('waiting for a job', () => {
  const accepted = { status: 202, body: { id: 'job_7', status: 'accepted', statusUrl: 'https://api.example.com/v1/jobs/job_7' }, headers: { 'retry-after': '0' } };
  const processing = { status: 200, body: { id: 'job_7', status: 'processing', retryAfter: 1 }, headers: { 'retry-after': '1' } };

  it('an aborted wait throws a PartnerError carrying the jobId', async () => {
    const { fetch } = scripted([accepted, processing, processing, processing]);
    const controller = new AbortController();
    const e = await client(fetch)
      .createSubmission({} as never, { signal: controller.signal, onPoll: () => controller.abort() })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PartnerAbortError);
    expect(e).toBeInstanceOf(PartnerError);
    expect(e).toMatchObject({ name: 'AbortError', jobId: 'job_7' });
  });

  it('a timed-out wait throws a PartnerTimeoutError carrying the jobId', async () => {
    const { fetch } = scripted([accepted, processing, processing]);
    const e = await client(fetch).createSubmission({} as never, { timeoutMs: 500 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PartnerTimeoutError);
    expect(e).toMatchObject({ jobId: 'job_7' });
  });

  it('resumes from a saved job id', async () => {
    const { fetch, calls } = scripted([{ status: 200, body: { id: 'job_7', status: 'succeeded', result: { ok: true } } }]);
    const job = await client(fetch).waitForJob('job_7');
    expect(job).toMatchObject({ status: 'succeeded', result: { ok: true } });
    expect(calls[0]!.url.pathname).toBe('/v1/jobs/job_7');
  });
});

describe('cancelling a job', () => {
  const canceledError = { code: 'canceled', message: 'the job was cancelled by its partner before it started', retryable: false };
  const canceled = { id: 'job_9', kind: 'submission.create', status: 'canceled', error: canceledError, createdAt: '2026-11-21T12:00:00.000Z', updatedAt: '2026-11-21T12:00:03.000Z' };

  it('POSTs /v1/jobs/{id}/cancel with no body and resolves with the cancelled job', async () => {
    const { fetch, calls } = scripted([{ status: 200, body: canceled }]);
    const job = await client(fetch).cancelJob('job_9');
    expect(job).toEqual(canceled);
    expect(job.lastResponse).toMatchObject({ status: 200, requestId: 'req-1' });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.init.method).toBe('POST');
    expect(calls[0]!.url.pathname).toBe('/v1/jobs/job_9/cancel');
    expect(calls[0]!.init.body ?? undefined).toBeUndefined();
    expect(new Headers(calls[0]!.init.headers).get('idempotency-key')).toBeNull();
  });

  it('takes a statusUrl as well as an id', async () => {
    const { fetch, calls } = scripted([{ status: 200, body: canceled }]);
    await client(fetch).cancelJob('https://api.example.com/v1/jobs/job_9');
    expect(calls[0]!.url.href).toBe('https://api.example.com/v1/jobs/job_9/cancel');
  });

  it('a re-cancel resolves the same; a dropped answer is resent (cancelling is idempotent)', async () => {
    const { fetch, calls } = scripted(['drop', { status: 200, body: canceled }, { status: 200, body: canceled }]);
    const api = client(fetch);
    expect(await api.cancelJob('job_9')).toEqual(canceled);
    expect(await api.cancelJob('job_9')).toEqual(canceled);
    expect(calls).toHaveLength(3);
  });

  it('a job that has started or settled: JobNotCancelableError (409 job_not_cancelable), not retried', async () => {
    const { fetch, calls } = scripted(() => ({ status: 409, body: err('job_not_cancelable') }));
    const e = await client(fetch).cancelJob('job_9').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JobNotCancelableError);
    expect(e).toBeInstanceOf(PartnerApiError);
    expect(e).toMatchObject({ name: 'JobNotCancelableError', status: 409, code: 'job_not_cancelable', retryable: false });
    expect(calls).toHaveLength(1);
  });

  it.each([
    [404, 'not_found', PartnerNotFoundError],
    [403, 'forbidden', PartnerPermissionError],
  ])('%i %s is a %o', async (status, code, Class) => {
    const { fetch } = scripted(() => ({ status, body: err(code) }));
    await expect(client(fetch).cancelJob('job_9')).rejects.toBeInstanceOf(Class);
  });

  it('a mutation waiting on a job that gets cancelled throws JobCanceledError with the jobId (409 canceled), under no new key', async () => {
    const { fetch, calls } = scripted(() => ({ status: 409, body: { error: canceledError, jobId: 'job_9' } }));
    const e = await client(fetch).createSubmission({} as never).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JobCanceledError);
    expect(e).toMatchObject({ status: 409, code: 'canceled', retryable: false, jobId: 'job_9' });
    expect(calls).toHaveLength(1);
  });

  it('a mutation following its job that turns out cancelled throws JobCanceledError with the jobId', async () => {
    const accepted = { status: 202, body: { id: 'job_9', status: 'accepted', statusUrl: 'https://api.example.com/v1/jobs/job_9' }, headers: { 'retry-after': '0' } };
    const { fetch, calls } = scripted([accepted, { status: 200, body: canceled }]);
    const e = await client(fetch).createSubmission({} as never).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JobCanceledError);
    expect(e).toMatchObject({ code: 'canceled', retryable: false, jobId: 'job_9' });
    expect(calls).toHaveLength(2);
  });

  it('waitForJob and getJob return a cancelled job as settled', async () => {
    const { fetch } = scripted(() => ({ status: 200, body: canceled }));
    const api = client(fetch);
    const waited = await api.waitForJob('job_9');
    expect(waited.status).toBe('canceled');
    if (waited.status === 'canceled') expect(waited.error.code).toBe('canceled');
    expect((await api.getJob('job_9')).status).toBe('canceled');
  });
});

describe('hooks, base URL and uploads', () => {
  it('calls onRequest and onResponse, never showing the token', async () => {
    const requests: RequestEvent[] = [];
    const responses: ResponseEvent[] = [];
    const { fetch } = scripted([{ status: 200, body: { status: 'ok' } }]);
    await client(fetch, { onRequest: (r) => requests.push(r), onResponse: (r) => responses.push(r) }).health();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: 'GET', url: 'https://api.example.com/v1/health', attempt: 1 });
    expect(JSON.stringify(requests)).not.toContain('tok');
    expect(responses[0]).toMatchObject({ status: 200, requestId: 'req-1' });
  });

  it.each(['https://api.example.com/v1', 'https://api.example.com/v1/', 'https://api.example.com/'])('normalises the base URL %s', async (baseUrl) => {
    const { fetch, calls } = scripted([{ status: 200, body: { status: 'ok' } }]);
    await client(fetch, { baseUrl }).health();
    expect(calls[0]!.url.href).toBe('https://api.example.com/v1/health');
  });

  it('refuses a Blob with neither a type nor a named extension before sending anything', async () => {
    const { fetch, calls } = scripted([]);
    const e = await client(fetch).uploadAttachment('s1', new Blob(['x'])).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TypeError);
    expect((e as Error).message).toMatch(/contentType/);
    expect(calls).toHaveLength(0);
  });

  it('warns once per deprecated operation', async () => {
    const seen: string[] = [];
    const deprecated = { deprecation: '@1767225600', link: '<https://docs.example.com/d>; rel="deprecation"' };
    const { fetch } = scripted(() => ({ status: 200, body: { items: [] }, headers: deprecated }));
    const api = client(fetch, { onDeprecation: (n) => seen.push(`${n.operation} ${n.link}`) });
    await api.getPolicy('0c8f8f9e-4d52-4c55-8d61-3f1e4f9b8a10');
    await api.getPolicy('1c8f8f9e-4d52-4c55-8d61-3f1e4f9b8a10');
    await api.listPolicies();
    expect(seen).toEqual(['GET /v1/policies/{id} https://docs.example.com/d', 'GET /v1/policies https://docs.example.com/d']);
  });

  it('finds the deprecation link among others, a comma in its target included (RFC 8288)', async () => {
    const seen: (string | undefined)[] = [];
    const link = '<https://api.example.com/v1/policies?cursor=a,b>; rel="next", <https://docs.example.com/d,2027>; rel="deprecation"; type="text/html"';
    const { fetch } = scripted(() => ({ status: 200, body: { items: [] }, headers: { deprecation: '@1767225600', link } }));
    await client(fetch, { onDeprecation: (n) => seen.push(n.link) }).listPolicies();
    expect(seen).toEqual(['https://docs.example.com/d,2027']);
  });
});

describe('one client per resource', () => {
  it('client.submissions.create is the mutation pattern the flat createSubmission has always been', async () => {
    const result = { submissionId: 's1', submissionName: 'Acme', status: 'submitted' };
    const { fetch, calls } = scripted(() => ({ status: 200, body: result }));
    const partner = client(fetch);
    const input = { externalRef: 'r', submissionType: 'application', effectiveDate: '2027-01-01', productId: 'p', applicant: { legalName: 'Acme' } } as const;
    expect(await partner.submissions.create(input)).toEqual(result);
    expect(await partner.createSubmission(input)).toEqual(result);
    expect(calls.map((c) => [c.init.method, c.url.pathname, new Headers(c.init.headers).get('prefer')])).toEqual([
      ['POST', '/v1/submissions', 'wait=15'],
      ['POST', '/v1/submissions', 'wait=15'],
    ]);
    const keys = calls.map((c) => new Headers(c.init.headers).get('idempotency-key'));
    expect(keys[0]).toBeTruthy();
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('every resource client reads the path its flat method reads, with the same defaults', async () => {
    const { fetch, calls } = scripted(() => ({ status: 200, body: { items: [], nextCursor: null, secret: 'whsec_x' } }));
    const partner = client(fetch);
    await partner.policies.list({ status: 'active' });
    await partner.jobs.list();
    await partner.products.get('p1');
    await partner.receipts.ofSubmission('s1');
    await partner.attachments.list('s1');
    await partner.webhookEndpoints.secret('we_1');
    await partner.events.list({ types: ['job.failed', 'submission.created'] });
    await partner.submissions.validate({ externalRef: 'r' });
    expect(calls.map((c) => `${c.init.method} ${c.url.pathname}${c.url.search}`)).toEqual([
      'GET /v1/policies?status=active',
      'GET /v1/jobs',
      'GET /v1/products/p1',
      'GET /v1/submissions/s1/receipts',
      'GET /v1/submissions/s1/attachments',
      'GET /v1/webhook-endpoints/we_1/secret',
      'GET /v1/events?types=job.failed%2Csubmission.created',
      'POST /v1/submissions/validate',
    ]);
  });
});
