// The request log end to end (issue 45; docs/api.md "Request log"), on the real stack: a submission
// and its replay found by Idempotency-Key within 5 s of the answers, a request by its X-Request-Id,
// the failures by status class; redaction as stored (no Authorization, tax ids masked, secrets gone,
// an upload as its file, a 1 MiB body cut at 16 KiB); the filters' 400s; isolation between partners;
// the permission; the log's reads and the public document not logged.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { PartnerClient } from '../sdk/client/src/index.js';
import { run as runCli } from '../sdk/cli/src/cli.js';
import { runProcess } from './support/run.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileBytes, multipartBytes, upload } from './support/attachments.js';
import { PRODUCT, provision, submissionBody } from './support/fixtures.js';
import { until } from './support/poll.js';
import { ALL_PERMISSIONS, ROOT } from './support/stack.js';
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
    // As sent: its members in the order sent.
    expect(Object.keys(detail.body.requestBody)).toEqual(Object.keys(body));
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

  it('keeps hostile header values (quotes, braces, JSON fragments, unicode) as one exact string each; filters match them exactly', async () => {
    // Node refuses CR and LF in a header; everything else a client can send goes through as is. A
    // header is bytes: the UTF-8 of the unicode part arrives as its latin1 reading, and must come back so.
    const bytes = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
    const tag = randomUUID();
    const userAgent = `evil/1.0 "}, {"status":500,"path":"/v1/admin","idempotencyKey":"x"} \\u0000 \t\t\${jndi:ldap://x} </script> ${bytes('ünïcødé ✓ 🚀 \u2028\u202e')} ${tag}`;
    const key = `k"},{"idempotencyKey":"other","requestId":"x"} %_* ${tag}`;
    const requestId = `rid"},{"requestId":"${tag}"}`;
    const sent = await stack.api('GET', '/v1/products', { token, headers: { 'user-agent': userAgent, 'idempotency-key': key, 'x-request-id': requestId } });
    expect(sent.status).toBe(200);
    // Not a usable request id: the gateway answered under a fresh one, and keeps the header as sent.
    const answeredAs = sent.headers.get('x-request-id')!;
    expect(answeredAs).not.toBe(requestId);
    const neighbour = `neighbour-${tag}`;
    expect((await stack.api('GET', '/v1/products', { token, headers: { 'idempotency-key': neighbour, 'x-request-id': neighbour, 'user-agent': 'plain/1.0' } })).status).toBe(200);

    const [item] = await listUntil(`idempotencyKey=${encodeURIComponent(key)}`, (i) => i.length === 1);
    expect(item).toMatchObject({ method: 'GET', path: '/v1/products', status: 200, idempotencyKey: key, requestId: answeredAs });
    const detail = await stack.api('GET', `/v1/requests/${item.id}`, { token });
    expect(detail.status).toBe(200);
    expect(detail.body.requestHeaders).toMatchObject({ 'user-agent': userAgent, 'idempotency-key': key, 'x-request-id': requestId });
    expect(JSON.parse(detail.text).requestHeaders['user-agent']).toBe(userAgent);

    // Exact filters: the served request id finds it; the raw header, a prefix of the key or a LIKE pattern find nothing.
    expect((await listUntil(`requestId=${encodeURIComponent(answeredAs)}`, (i) => i.length === 1))[0].id).toBe(item.id);
    for (const query of [`requestId=${encodeURIComponent(requestId)}`, `idempotencyKey=${encodeURIComponent('k"},{"idempotencyKey":"other"')}`, 'idempotencyKey=%25', `idempotencyKey=${encodeURIComponent(`%${tag}`)}`, 'idempotencyKey=other']) {
      const r = await stack.api('GET', `/v1/requests?${query}`, { token });
      expect(r.status, query).toBe(200);
      expect(r.body.items, query).toEqual([]);
    }
    // The next entry is whole and its own.
    const [next] = await listUntil(`idempotencyKey=${neighbour}`, (i) => i.length === 1);
    expect(next).toMatchObject({ requestId: neighbour, idempotencyKey: neighbour, path: '/v1/products', status: 200 });
    expect((await stack.api('GET', `/v1/requests/${next.id}`, { token })).body.requestHeaders).toMatchObject({ 'user-agent': 'plain/1.0', 'idempotency-key': neighbour, 'x-request-id': neighbour });
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

  it('is read by the SDK (requests.list/get) and the CLI (partner requests list|show)', async () => {
    const creds = await stack.createClient();
    const client = new PartnerClient({ baseUrl: stack.gatewayUrl, authUrl: stack.authUrl, clientId: creds.clientId, clientSecret: creds.clientSecret, scope: stack.scope });
    const key = `sdk-${randomUUID()}`;
    await client.createSubmission({ ...submissionBody(), applicant: { legalName: 'Acme SDK LLC', taxId: '987654321' } }, { idempotencyKey: key });
    const page = await until('the SDK lists the submission by its key', async () => {
      const p = await client.requests.list({ idempotencyKey: key });
      return p.items.length === 1 ? p : false;
    }, APPEARS_WITHIN_MS);
    const entry = await client.requests.get(page.items[0]!.id);
    expect(entry).toMatchObject({ method: 'POST', path: '/v1/submissions', idempotencyKey: key, requestBody: { applicant: { taxId: '****4321' } } });
    const iterated: string[] = [];
    for await (const item of client.requests.iterate({ idempotencyKey: key, limit: 1 })) iterated.push(item.id);
    expect(iterated).toEqual([entry.id]);

    const env = {
      PATH: process.env.PATH ?? '',
      HOME: '/nonexistent',
      PARTNER_BASE_URL: stack.gatewayUrl,
      PARTNER_AUTH_URL: stack.authUrl,
      PARTNER_CLIENT_ID: creds.clientId,
      PARTNER_CLIENT_SECRET: creds.clientSecret,
      PARTNER_SCOPE: stack.scope,
    };
    const cli = (...args: string[]) => runProcess(process.execPath, [join(ROOT, 'sdk/cli/dist/main.js'), ...args], { env });
    const listed = await cli('requests', 'list', '--idempotency-key', key, '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).items.map((i: { id: string }) => i.id)).toEqual([entry.id]);
    const table = await cli('requests', 'list', '--status', '2xx', '--request-id', entry.requestId);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(entry.id);
    const shownJson = await cli('requests', 'show', entry.id);
    expect(shownJson.code, shownJson.stderr).toBe(0);
    expect(JSON.parse(shownJson.stdout)).toEqual(entry);
    // On a terminal: the entry, then its headers and bodies pretty-printed.
    const stdout = Object.assign(new PassThrough(), { isTTY: true, columns: 120 });
    let printed = '';
    stdout.on('data', (d: Buffer) => (printed += d.toString()));
    const code = await runCli(['requests', 'show', entry.id], { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env }, new AbortController().signal);
    expect(code).toBe(0);
    expect(printed).toMatch(new RegExp(`^id +${entry.id}$`, 'm'));
    expect(printed).toMatch(/request body:\n\{\n {2}"externalRef"/);
    expect(printed).toContain('"taxId": "****4321"');
    expect(printed).toMatch(/response body:\n\{\n {2}"/);
    const bad = await cli('requests', 'list', '--status', '6xx');
    expect(bad.code).toBe(2);
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
