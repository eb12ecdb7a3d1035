// The request log end to end (issue 45; docs/api.md "Request log"), on the real stack: a submission
// and its replay found by Idempotency-Key within 5 s of the answers, a request by its X-Request-Id,
// the failures by status class; redaction as stored (no Authorization, tax ids masked, secrets gone,
// an upload as its file, a 1 MiB body cut at 16 KiB); the filters' 400s; isolation between partners;
// the permission; the log's reads and the public document not logged.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileBytes, multipartBytes, upload } from './support/attachments.js';
import { PRODUCT, provision, submissionBody } from './support/fixtures.js';
import { until } from './support/poll.js';
import { ALL_PERMISSIONS } from './support/stack.js';
import { useStack } from './support/use-stack.js';

/** The contract's bound: a request appears in the log within 5 s of its answer. */
const APPEARS_WITHIN_MS = 5_000;

describe('request log', () => {
  let token: string;
  const stack = useStack(async (s) => {
    await s.startAll();
  });
  beforeAll(async () => {
    token = await provision(stack);
  });

  /** Lists the log until `check` holds for the items, within the contract's 5 s (measured from now). */
  async function listUntil(query: string, check: (items: any[]) => boolean, as = token): Promise<any[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
    return until(
      `GET /v1/requests?${query}`,
      async () => {
        const res = await stack.api('GET', `/v1/requests?${query}`, { token: as });
        expect(res.status).toBe(200);
        return check(res.body.items) ? (res.body.items as unknown[]) : false;
      },
      APPEARS_WITHIN_MS,
    ) as Promise<any[]>; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  it('finds a submission and its replay by Idempotency-Key within 5 s, the replay marked, bodies redacted', async () => {
    const key = `key-${randomUUID()}`;
    const body = { ...submissionBody(), applicant: { legalName: 'Acme Tax LLC', taxId: '12-3456789' } };
    const headers = { prefer: 'wait=20', 'idempotency-key': key, 'x-request-id': `first-${key}`, 'user-agent': 'acme-integration/2.3.1', cookie: 'session=abc' };
    const first = await stack.api('POST', '/v1/submissions', { token, headers, json: body });
    expect(first.status).toBe(200);
    const replay = await stack.api('POST', '/v1/submissions', { token, headers: { ...headers, 'x-request-id': `replay-${key}` }, json: body });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const jobId = first.headers.get('job-id');

    const items = await listUntil(`idempotencyKey=${encodeURIComponent(key)}`, (i) => i.length === 2);
    // Newest first: the replay, then the original.
    expect(items.map((i) => [i.requestId, i.idempotentReplayed])).toEqual([
      [`replay-${key}`, true],
      [`first-${key}`, false],
    ]);
    for (const item of items) {
      expect(item).toMatchObject({ method: 'POST', path: '/v1/submissions', query: null, status: 200, idempotencyKey: key, jobId, errorCode: null, principalId: null });
      expect(item.id).toMatch(/^req_[0-9a-f]{32}$/);
      expect(item.durationMs).toBeGreaterThan(0);
      expect(Date.parse(item.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    }
    expect(items[0].clientId).toBe(items[1].clientId);

    const detail = await stack.api('GET', `/v1/requests/${items[1].id}`, { token });
    expect(detail.status).toBe(200);
    expect(detail.body.requestHeaders).toEqual({
      'content-type': 'application/json',
      prefer: 'wait=20',
      'idempotency-key': key,
      'user-agent': 'acme-integration/2.3.1',
      'x-request-id': `first-${key}`,
    });
    expect(detail.body.requestBody).toEqual({ ...body, applicant: { legalName: 'Acme Tax LLC', taxId: '****6789' } });
    expect(detail.body.requestBodyTruncated).toBe(false);
    expect(detail.body.requestBodySizeBytes).toBe(Buffer.byteLength(JSON.stringify(body)));
    expect(first.body.submissionId).toEqual(expect.any(String));
    expect(detail.body.responseBody.submissionId).toBe(first.body.submissionId);
    expect(detail.body.responseBody.applicant.taxId).toBe('****6789');
    expect(detail.body.responseBodyTruncated).toBe(false);
    // Nothing of the tax id or the token anywhere in the stored rows.
    const stored = (await stack.sql<{ row: string }>('SELECT r::text AS row FROM events.request_log r')).map((r) => r.row).join('\n');
    expect(stored).not.toContain('3456789');
    expect(stored).not.toContain(token.slice(-20));
    expect(stored).not.toContain('session=abc');
  });

  it('finds a request by its X-Request-Id, and the job it read by jobId', async () => {
    const requestId = `rid-${randomUUID()}`;
    const created = await stack.api('POST', '/v1/submissions', { token, headers: { prefer: 'wait=20' }, json: submissionBody() });
    const jobId = created.headers.get('job-id')!;
    const read = await stack.api('GET', `/v1/jobs/${jobId}`, { token, headers: { 'x-request-id': requestId } });
    expect(read.status).toBe(200);
    const items = await listUntil(`requestId=${requestId}`, (i) => i.length === 1);
    expect(items[0]).toMatchObject({ method: 'GET', path: `/v1/jobs/${jobId}`, status: 200, jobId, idempotencyKey: null, idempotentReplayed: false });
    const byJob = await listUntil(`jobId=${jobId}`, (i) => i.length === 2);
    expect(byJob.map((i) => i.method)).toEqual(['GET', 'POST']);
  });

  it('filters by status class or code, method and path prefix; errors carry their code', async () => {
    const requestId = `bad-${randomUUID()}`;
    const bad = await stack.api('POST', '/v1/submissions', { token, headers: { 'x-request-id': requestId }, json: { nope: true } });
    expect(bad.status).toBe(400);
    const missing = await stack.api('GET', `/v1/jobs/job_${'0'.repeat(32)}`, { token });
    expect(missing.status).toBe(404);
    const failures = await listUntil('status=4xx', (i) => i.some((x) => x.requestId === requestId) && i.some((x) => x.status === 404));
    expect(failures.every((i) => i.status >= 400 && i.status < 500)).toBe(true);
    expect(failures.find((x) => x.requestId === requestId)).toMatchObject({ status: 400, errorCode: 'validation_error' });
    const detail = await stack.api('GET', `/v1/requests/${failures.find((x) => x.requestId === requestId).id}`, { token });
    expect(detail.body.responseBody.error.code).toBe('validation_error');

    const exact = await stack.api('GET', '/v1/requests?status=404', { token });
    expect(exact.body.items.length).toBeGreaterThan(0);
    expect(exact.body.items.every((i: { status: number }) => i.status === 404)).toBe(true);
    const ok = await stack.api('GET', '/v1/requests?status=2xx&method=POST&pathPrefix=/v1/submissions', { token });
    expect(ok.body.items.length).toBeGreaterThan(0);
    expect(ok.body.items.every((i: { status: number; method: string; path: string }) => i.status < 300 && i.method === 'POST' && i.path.startsWith('/v1/submissions'))).toBe(true);
    const since = await stack.api('GET', `/v1/requests?createdSince=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, { token });
    expect(since.body.items).toEqual([]);
  });

  it('pages newest first with cursors bound to their filters', async () => {
    const key = `page-${randomUUID()}`;
    for (let i = 0; i < 3; i++) await stack.api('GET', '/v1/health', { token, headers: { 'idempotency-key': key, 'x-request-id': `${key}-${i}` } });
    await listUntil(`idempotencyKey=${key}`, (i) => i.length === 3);
    const seen: string[] = [];
    let cursor = '';
    do {
      const page = await stack.api('GET', `/v1/requests?idempotencyKey=${key}&limit=1${cursor ? `&cursor=${cursor}` : ''}`, { token });
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((i: { requestId: string }) => i.requestId));
      cursor = page.body.nextCursor ?? '';
    } while (cursor);
    expect(seen).toEqual([`${key}-2`, `${key}-1`, `${key}-0`]);

    const first = await stack.api('GET', `/v1/requests?idempotencyKey=${key}&limit=1`, { token });
    const other = await stack.api('GET', `/v1/requests?idempotencyKey=other&limit=1&cursor=${first.body.nextCursor}`, { token });
    expect(other.status).toBe(400);
    expect(other.body.error.details).toEqual([expect.objectContaining({ field: 'cursor' })]);
  });

  it('answers 400 naming each bad filter', async () => {
    for (const [query, fields] of [
      ['status=6xx', ['status']],
      ['status=abc', ['status']],
      ['status=2XX', ['status']],
      ['method=FETCH', ['method']],
      ['pathPrefix=v1', ['pathPrefix']],
      ['createdSince=yesterday&createdBefore=2026-13-01', ['createdSince', 'createdBefore']],
      ['limit=0&colour=red', ['limit', 'colour']],
      ['cursor=not-a-cursor', ['cursor']],
    ] as const) {
      const res = await stack.api('GET', `/v1/requests?${query}`, { token });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.map((d: { field: string }) => d.field).sort(), query).toEqual([...fields].sort());
    }
    expect((await stack.api('GET', '/v1/requests/req_nope', { token })).status).toBe(404);
    expect((await stack.api('GET', `/v1/requests/req_${'0'.repeat(32)}`, { token })).status).toBe(404);
  });

  it('keeps an upload as its file and a 1 MiB body cut at 16 KiB, flagged', async () => {
    const created = await stack.api('POST', '/v1/submissions', { token, headers: { prefer: 'wait=20' }, json: submissionBody() });
    const data = fileBytes('application/pdf', 40_000);
    const key = `upload-${randomUUID()}`;
    const up = await upload(stack, token, created.body.submissionId, multipartBytes({ fileName: 'loss-runs.pdf', contentType: 'application/pdf', data }), { 'idempotency-key': key });
    expect(up.status).toBe(200);
    const [entry] = await listUntil(`idempotencyKey=${key}`, (i) => i.length === 1);
    const detail = await stack.api('GET', `/v1/requests/${entry.id}`, { token });
    expect(detail.body.requestBody).toEqual({ fileName: 'loss-runs.pdf', contentType: 'application/pdf', sizeBytes: 40_000, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(detail.body.requestHeaders['content-type']).toMatch(/^multipart\/form-data/);

    const big = { ...submissionBody(), externalRef: 'x'.repeat(1_000_000) };
    const requestId = `big-${randomUUID()}`;
    const res = await stack.api('POST', '/v1/submissions/validate', { token, headers: { 'x-request-id': requestId }, json: big });
    expect(res.status).toBeLessThan(500);
    const [bigEntry] = await listUntil(`requestId=${requestId}`, (i) => i.length === 1);
    const bigDetail = await stack.api('GET', `/v1/requests/${bigEntry.id}`, { token });
    expect(bigDetail.body.requestBodyTruncated).toBe(true);
    expect(typeof bigDetail.body.requestBody).toBe('string');
    expect(Buffer.byteLength(bigDetail.body.requestBody)).toBeLessThanOrEqual(16 * 1024);
    expect(bigDetail.body.requestBody.startsWith('{')).toBe(true);
    expect(bigDetail.body.requestBodySizeBytes).toBe(Buffer.byteLength(JSON.stringify(big)));
  });

  it('removes webhook secrets from what it keeps of requests and answers', async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const key = `hook-${randomUUID()}`;
    const created = await stack.api('POST', '/v1/webhook-endpoints', {
      token,
      headers: { prefer: 'wait=20', 'idempotency-key': key },
      json: { url: 'http://127.0.0.1:9/hook', eventTypes: ['submission.created'], secret },
    });
    expect(created.status).toBe(200);
    const read = await stack.api('GET', `/v1/webhook-endpoints/${created.body.endpointId}/secret`, { token, headers: { 'x-request-id': `secret-${key}` } });
    expect(read.body.secret).toBe(secret);
    const [entry] = await listUntil(`idempotencyKey=${key}`, (i) => i.length === 1);
    const [secretRead] = await listUntil(`requestId=secret-${key}`, (i) => i.length === 1);
    const detail = await stack.api('GET', `/v1/requests/${entry.id}`, { token });
    expect(detail.body.requestBody).toEqual({ url: 'http://127.0.0.1:9/hook', eventTypes: ['submission.created'] });
    expect((await stack.api('GET', `/v1/requests/${secretRead.id}`, { token })).body.responseBody).toEqual({});
    const stored = (await stack.sql<{ row: string }>('SELECT r::text AS row FROM events.request_log r')).map((r) => r.row).join('\n');
    expect(stored).not.toContain(secret.slice('whsec_'.length, 30));
  });

  it('does not log its own reads, and shows another partner nothing (404 by id)', async () => {
    const mine = await listUntil('limit=200', (i) => i.length > 0);
    expect(mine.some((i) => i.path.startsWith('/v1/requests'))).toBe(false);
    expect(mine.some((i) => i.path === '/v1/openapi.json')).toBe(false);

    const other = await stack.token(await stack.createClient());
    await stack.api('GET', '/v1/health', { token: other, headers: { 'x-request-id': 'other-partner' } });
    const theirs = await listUntil('limit=200', (i) => i.length > 0, other);
    expect(theirs.map((i) => i.requestId)).toEqual(['other-partner']);
    expect(new Set(theirs.map((i) => i.id)).has(mine[0].id)).toBe(false);
    expect((await stack.api('GET', `/v1/requests/${mine[0].id}`, { token: other })).status).toBe(404);
    // The same partner's other client sees its partner's log (the log is the partner's).
    expect((await stack.api('GET', `/v1/requests/${mine[0].id}`, { token })).status).toBe(200);
  });

  it('needs requests/read', async () => {
    const without = await stack.token(await stack.createClient({ permissions: ALL_PERMISSIONS.filter((p) => p !== 'requests/read') }));
    const list = await stack.api('GET', '/v1/requests', { token: without });
    expect(list.status).toBe(403);
    expect(list.body.error.code).toBe('forbidden');
    expect((await stack.api('GET', `/v1/requests/req_${'0'.repeat(32)}`, { token: without })).status).toBe(403);
    // The refused requests are not in anybody's log either: they are reads of the log.
    expect(PRODUCT).toBeTruthy();
  });
});
