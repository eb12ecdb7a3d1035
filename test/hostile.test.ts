// Hostile input: property-based fuzzing of bodies, headers, query strings, paths and multipart
// uploads (every answer a documented status in the envelope, never a 5xx), JWT attacks, and
// broken object level authorization across partners and tenants on every id-bearing route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { Stack, type ApiResponse, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { accessClaims } from './support/claims.js';
import { PRODUCT } from './support/fixtures.js';

const DOCUMENTED = new Set([200, 202, 304, 400, 401, 403, 404, 405, 409, 413, 415, 422, 429]);
let client: ClientCreds;
let token: string;
let submissionId: string;

const validSubmission = () => ({
  externalRef: `ref-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: PRODUCT,
  applicant: { legalName: 'Hostile Input Inc' },
});

const stack = useStack(async (stack) => {
  await stack.startAll();
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Fuzz product');
  client = await stack.createClient();
  token = await stack.token(client);
  const s = await stack.api('POST', '/v1/submissions', { token, json: validSubmission(), headers: { prefer: 'wait=10' } });
  submissionId = s.body.submissionId;
});

/** A documented status, and for errors the envelope; never a 5xx. */
function expectDocumented(r: ApiResponse): void {
  if (!DOCUMENTED.has(r.status)) throw new Error(`undocumented status ${r.status}: ${r.text.slice(0, 300)}`);
  if (r.status >= 400) {
    const e = r.body?.error;
    if (typeof e?.code !== 'string' || typeof e?.message !== 'string' || typeof e?.retryable !== 'boolean') {
      throw new Error(`error outside the envelope (${r.status}): ${r.text.slice(0, 300)}`);
    }
  }
  expect(r.headers.get('x-request-id')).toBeTruthy();
}

// Header values fetch can send: visible ASCII, spaces and tabs inside.
const headerValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,60}[\x21-\x7e])?$/);
const RUNS = { numRuns: 60 };

describe('fuzzing', () => {
  it('answers any JSON body for POST /v1/submissions in the envelope', async () => {
    const field = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string(), fc.constant(PRODUCT), fc.constant('2027-01-01'));
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record(
        {
          externalRef: field,
          submissionType: fc.oneof(fc.constant('application'), field),
          effectiveDate: field,
          productId: field,
          applicant: fc.oneof(fc.record({ legalName: field }, { requiredKeys: [] }), field),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(body, async (json) => {
        const r = await stack.api('POST', '/v1/submissions', { token, json });
        expectDocumented(r);
        expect([202, 400]).toContain(r.status);
      }),
      RUNS,
    );
  });

  it('answers any JSON body for the webhook endpoint mutations in the envelope, and registers only valid endpoints', async () => {
    const field = fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.constant(null), fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }), fc.webUrl());
    const body = fc.record(
      {
        url: fc.oneof(field, fc.constantFrom('http://127.0.0.1:9/x', 'https://93.184.215.14/hooks', 'ftp://x', 'https://u:p@x.example/', 'http://0x7f000001/')),
        eventTypes: fc.oneof(field, fc.constant(['*']), fc.subarray(['job.succeeded', 'job.failed', 'submission.created', '*'], { minLength: 1 })),
        description: field,
        status: field,
        since: field,
      },
      { requiredKeys: [] },
    );
    // A partner of its own: the endpoints this registers count against its limit, not the file's client's.
    const own = await stack.token(await stack.createClient());
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom('POST /v1/webhook-endpoints', 'PATCH /v1/webhook-endpoints/we_0', 'POST /v1/webhook-endpoints/we_0/recover'), async (json, route) => {
        const [method, path] = route.split(' ') as [string, string];
        const r = await stack.api(method, path, { token: own, json });
        expectDocumented(r);
        // A job only for a body that passes every check; unknown endpoints are 404 before any job.
        expect(method === 'POST' && path === '/v1/webhook-endpoints' ? [202, 400] : [400, 404]).toContain(r.status);
      }),
      RUNS,
    );
  });

  it('answers nested, wide and key-repeating JSON texts with 400 invalid_json when past a limit, never a 5xx', async () => {
    // A JSON text built from a shape: containers nested to a depth around the limit (32), or an array
    // around the values limit (10,000), with a key repeated (perhaps escaped) somewhere inside.
    const text = fc.record({
      depth: fc.integer({ min: 1, max: 80 }),
      width: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 9_990, max: 10_010 })),
      kinds: fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
      repeat: fc.constantFrom('none', 'plain', 'escaped'),
    });
    await fc.assert(
      fc.asyncProperty(text, async ({ depth, width, kinds, repeat }) => {
        const dup = repeat === 'none' ? '' : repeat === 'plain' ? ',"k":2' : ',"\\u006b":2';
        let body = `[${new Array(width).fill('0').join(',')}]`;
        for (let d = 1; d < depth; d++) body = kinds[d % kinds.length] ? `{"k":1,"v":${body}${dup}}` : `[${body}]`;
        const objects = Array.from({ length: depth - 1 }, (_, d) => kinds[(d + 1) % kinds.length]).filter(Boolean).length;
        const values = width + 1 + (depth - 1) + objects;
        const r = await stack.api('POST', '/v1/submissions', { token, body, headers: { 'content-type': 'application/json' } });
        expectDocumented(r);
        expect(r.status).toBe(400);
        const pastLimit = depth > 32 || values > 10_000 || (repeat !== 'none' && objects > 0);
        expect(r.body.error.code, `depth ${depth}, ${values} values, repeat ${repeat} in ${objects} objects`).toBe(pastLimit ? 'invalid_json' : 'validation_error');
      }),
      RUNS,
    );
  });

  it('answers raw bytes with any content type in the envelope', async () => {
    const contentType = fc.oneof(
      fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'),
      headerValue,
    );
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2000 }), contentType, async (bytes, type) => {
        const r = await stack.api('POST', '/v1/submissions', { token, headers: { 'content-type': type }, body: Buffer.from(bytes) as unknown as BodyInit });
        expectDocumented(r);
      }),
      RUNS,
    );
  });

  it('answers any Prefer, Idempotency-Key, x-principal-id and Authorization header in the envelope', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ prefer: headerValue, 'idempotency-key': headerValue, 'x-principal-id': headerValue }, { requiredKeys: [] }),
        fc.oneof(fc.constant(`Bearer ${token}`), headerValue.map((v) => `Bearer ${v}`), headerValue),
        async (headers, authorization) => {
          const r = await stack.api('POST', '/v1/submissions', {
            json: { ...validSubmission(), externalRef: 'sandbox:delay=1' },
            headers: { ...headers, authorization, ...(headers.prefer ? { prefer: headers.prefer.replace(/wait\s*=\s*\d+/gi, 'wait=0') } : {}) },
          });
          expectDocumented(r);
        },
      ),
      RUNS,
    );
  });

  it('answers any query string on the listings in the envelope', async () => {
    const key = fc.oneof(fc.constantFrom('limit', 'cursor', 'status', 'productId', 'policyNumber', 'updatedSince', 'kind', 'createdSince', 'createdBefore', 'externalRef', 'principalId'), fc.string({ maxLength: 10 }));
    const value = fc.oneof(fc.string({ maxLength: 40 }), fc.integer().map(String), fc.constantFrom("' OR 1=1 --", '%00', '../..', '2025-01-01T00:00:00Z'));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, value), { maxLength: 4 }), fc.constantFrom('/v1/policies', `/v1/submissions/${submissionId}/attachments`, '/v1/jobs', '/v1/submissions'), async (pairs, path) => {
        const r = await stack.api('GET', `${path}?${new URLSearchParams(pairs).toString()}`, { token });
        expectDocumented(r);
        expect([200, 400]).toContain(r.status);
      }),
      RUNS,
    );
  });

  it('answers any id in any id-bearing path in the envelope', async () => {
    const segment = fc.oneof(fc.string({ minLength: 1, maxLength: 80 }), fc.uuid(), fc.constantFrom('job_', "1' OR '1'='1", '..', '%2e%2e', 'null', '0'.repeat(300)));
    const paths = (id: string) => [
      `/v1/jobs/${id}`,
      `/v1/submissions/${id}`,
      `/v1/policies/${id}`,
      `/v1/submissions/${id}/attachments`,
      `/v1/submissions/${submissionId}/attachments/${id}`,
      `/v1/submissions/${submissionId}/attachments/${id}/content`,
      `/v1/webhook-endpoints/${id}`,
      `/v1/webhook-endpoints/${id}/deliveries`,
      `/v1/webhook-endpoints/${id}/secret`,
    ];
    await fc.assert(
      fc.asyncProperty(segment, fc.nat({ max: 8 }), async (raw, i) => {
        const r = await stack.api('GET', paths(encodeURIComponent(raw))[i]!, { token });
        expectDocumented(r);
        expect([200, 404]).toContain(r.status);
      }),
      RUNS,
    );
  });

  it('answers any multipart upload in the envelope', async () => {
    const part = fc.record({
      name: fc.constantFrom('file', 'documentType', 'other', ''),
      filename: fc.option(fc.string({ maxLength: 60 }), { nil: undefined }),
      type: fc.option(fc.constantFrom('application/pdf', 'text/plain', 'application/x-msdownload', 'image/png', ''), { nil: undefined }),
      data: fc.uint8Array({ maxLength: 500 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 3 }), fc.boolean(), async (parts, truncate) => {
        const boundary = 'fuzzboundary';
        const chunks: Buffer[] = [];
        for (const p of parts) {
          const filename = p.filename === undefined ? '' : `; filename="${p.filename.replace(/["\r\n]/g, '')}"`;
          chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${filename}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`));
          chunks.push(Buffer.from(p.data), Buffer.from('\r\n'));
        }
        if (!truncate) chunks.push(Buffer.from(`--${boundary}--\r\n`));
        const r = await stack.api('POST', `/v1/submissions/${submissionId}/attachments`, {
          token,
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
          body: Buffer.concat(chunks) as unknown as BodyInit,
        });
        expectDocumented(r);
      }),
      { numRuns: 40 },
    );
  });
});

describe('JWT attacks', () => {
  const claims = () => accessClaims(stack, { ...client, permissions: ['health/read'] });

  it('ignores jku, x5u and embedded jwk headers: a self-signed token is refused and nothing is fetched', async () => {
    let fetched = 0;
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'attacker', alg: 'ES256', use: 'sig' };
    const server: Server = createServer((_req, res) => {
      fetched++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/jwks.json`;
    try {
      const forged = await new SignJWT(claims())
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'attacker', jku: url, x5u: url, jwk } as never)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
      const r = await stack.api('GET', '/v1/health', { token: forged });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('invalid_token');
      expect(fetched).toBe(0);
    } finally {
      server.close();
    }
  });

  it.each([["' OR 1=1 --"], ['../../../../etc/passwd'], ['k'.repeat(200)], ['']])('refuses a token whose kid is %j', async (kid) => {
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).setIssuedAt().setExpirationTime('5m').sign(privateKey);
    const r = await stack.api('GET', '/v1/health', { token: forged });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('invalid_token');
  });

  it('refuses huge tokens without trying them', async () => {
    for (const size of [9_000, 14_000]) {
      const r = await stack.api('GET', '/v1/health', { token: `${token}${'A'.repeat(size)}` });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('invalid_token');
    }
  });
});

describe('object level authorization', () => {
  it("answers every id-bearing route with 404 for another partner's resources, and changes nothing", async () => {
    // Partner A owns a submission with an attachment, a job and a policy.
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('%PDF-1.4 owned by A')], { type: 'application/pdf' }), 'a.pdf');
    const uploaded = await stack.api('POST', `/v1/submissions/${submissionId}/attachments`, { token, body: form, headers: { prefer: 'wait=10' } });
    expect(uploaded.status).toBe(200);
    const attachmentId = uploaded.body.attachmentId as string;
    const [job] = await stack.sql<{ job_id: string }>('SELECT job_id FROM job.jobs WHERE tenant_id = $1 LIMIT 1', [client.tenant]);
    const dir = mkdtempSync(join(tmpdir(), 'bola-'));
    writeFileSync(
      join(dir, 'p.jsonl'),
      `${JSON.stringify({ policyNumber: 'BOLA-1', status: 'active', productId: PRODUCT, insured: { legalName: 'A' }, effectiveDate: '2026-01-01', expirationDate: '2027-01-01', premium: { amount: '10.00', currency: 'USD' } })}\n`,
    );
    await stack.admin('policy', 'import', '--tenant', client.tenant, '--partner', client.partnerId, join(dir, 'p.jsonl'));
    const policyId = (await stack.api('GET', '/v1/policies', { token })).body.items[0].policyId as string;
    // And a webhook endpoint (no dispatcher runs here: nothing is sent to it).
    const endpoint = await stack.api('POST', '/v1/webhook-endpoints', { token, json: { url: 'http://127.0.0.1:9/hooks', eventTypes: ['*'] }, headers: { prefer: 'wait=10' } });
    expect(endpoint.status).toBe(200);
    const endpointId = endpoint.body.endpointId as string;
    const webhookRoutes: [string, string, unknown][] = [
      ['GET', `/v1/webhook-endpoints/${endpointId}`, undefined],
      ['PATCH', `/v1/webhook-endpoints/${endpointId}`, { status: 'disabled' }],
      ['GET', `/v1/webhook-endpoints/${endpointId}/secret`, undefined],
      ['POST', `/v1/webhook-endpoints/${endpointId}/secret/rotate`, undefined],
      ['GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, undefined],
      ['POST', `/v1/webhook-endpoints/${endpointId}/recover`, { since: '2026-01-01T00:00:00Z' }],
      ['POST', `/v1/webhook-endpoints/${endpointId}/ping`, undefined],
      ['DELETE', `/v1/webhook-endpoints/${endpointId}`, undefined],
    ];

    const routes: [string, string][] = [
      ['GET', `/v1/jobs/${job!.job_id}`],
      ['GET', `/v1/submissions/${submissionId}`],
      ['GET', `/v1/policies/${policyId}`],
      ['GET', `/v1/submissions/${submissionId}/attachments`],
      ['GET', `/v1/submissions/${submissionId}/attachments/${attachmentId}`],
      ['GET', `/v1/submissions/${submissionId}/attachments/${attachmentId}/content`],
      ['DELETE', `/v1/submissions/${submissionId}/attachments/${attachmentId}`],
      ['POST', `/v1/submissions/${submissionId}/attachments`],
    ];
    const sameTenant = await stack.token(await stack.createClient({ tenant: client.tenant }));
    const otherTenantSamePartnerName = await stack.token(await stack.createClient({ partner: client.partnerId }));
    for (const other of [sameTenant, otherTenantSamePartnerName]) {
      for (const [method, path] of routes) {
        const upload = new FormData();
        upload.append('file', new Blob([Buffer.from('intruder')], { type: 'text/plain' }), 'x.txt');
        const r = await stack.api(method, path, { token: other, headers: { prefer: 'wait=5' }, ...(method === 'POST' ? { body: upload } : {}) });
        expect({ method, path, status: r.status }).toEqual({ method, path, status: 404 });
        expect(r.body.error.code).toBe('not_found');
      }
      for (const [method, path, json] of webhookRoutes) {
        const r = await stack.api(method, path, { token: other, headers: { prefer: 'wait=5' }, ...(json !== undefined ? { json } : {}) });
        expect({ method, path, status: r.status }).toEqual({ method, path, status: 404 });
        expect(r.body.error.code).toBe('not_found');
      }
      expect((await stack.api('GET', '/v1/webhook-endpoints', { token: other })).body.items).toEqual([]);
    }
    expect((await stack.api('GET', `/v1/webhook-endpoints/${endpointId}`, { token })).body).toMatchObject({ status: 'enabled', endpointId });
    const still = await stack.api('GET', `/v1/submissions/${submissionId}/attachments/${attachmentId}`, { token });
    expect(still.status).toBe(200);
    const list = await stack.api('GET', `/v1/submissions/${submissionId}/attachments`, { token });
    const names = list.body.items.map((a: { fileName: string }) => a.fileName);
    expect(names).toContain('a.pdf');
    expect(names).not.toContain('x.txt');
  });
});

describe('response headers', () => {
  it('marks token and API responses no-store and nosniff', async () => {
    const t = await stack.tokenRequest({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    expect(t.headers.get('cache-control')).toBe('no-store');
    expect(t.headers.get('x-content-type-options')).toBe('nosniff');
    for (const [method, path] of [['GET', '/v1/health'], ['GET', '/v1/nope'], ['POST', '/v1/submissions']]) {
      const r = await stack.api(method!, path!, { token });
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});

// Every route × every parameter and header class × the values a hostile probe found breaks with
// (NUL, other C0 controls, DEL, lone surrogates, dates and timestamps outside years 0001–9999, huge
// and negative numbers, repeated parameters, malformed percent-encoding, long values): never a 5xx,
// always the envelope, and nothing changes but what a 2xx says it did. The totals are printed and
// recorded in docs/reliability.md.
describe('hostile values on every route', () => {
  const TEXT = ['a\u0000b', '\u0000', 'x\u0001y', '\u001b[31mred', 'del\u007f', 'tab\tin', 'new\nline', 'Acme \ud800', '\udc00ref', '\ud83d', '\u200b', ''];
  const DATES = ['0000-01-01', '0000-12-31', '10000-01-01', '-0001-01-01', '9999-12-32', '2025-02-29'];
  const TIMESTAMPS = ['9999-12-31T23:59:59-23:59', '9999-12-31T23:30:00-01:00', '0001-01-01T00:00:00+00:01', '0000-06-01T00:00:00Z', '+275760-09-13T00:00:00Z'];
  const NUMBERS = ['1e309', '-1', '0', '99999999999999999999999', '1.5', 'NaN', '0x10', '-0'];
  const OTHER = ["' OR 1=1 --", '../../etc/passwd', 'k'.repeat(5000), '🏢'.repeat(50), 'null', '[]', '{}'];
  const ALL_VALUES = [...TEXT, ...DATES, ...TIMESTAMPS, ...NUMBERS, ...OTHER];
  // In a query string: percent-encoded UTF-8 where there is one; a lone surrogate has none, so it
  // goes as the bytes a careless client would send (CESU-8), along with malformed escapes.
  const enc = (v: string): string => {
    try {
      return encodeURIComponent(v);
    } catch {
      return '%ED%A0%80';
    }
  };
  const RAW_QUERY = ['%', '%zz', '%00', '%C0%80', '%ED%A0%80', '%FF', '%E2%80%8B'];
  // Header values fetch can send (no controls, Latin-1 only).
  const HEADER_VALUES = ['0000-01-01', '9999-12-31T23:59:59-23:59', '1e309', '-1', '99999999999999999999999', "' OR 1=1 --", 'k'.repeat(8000), '\u00ff\u00fe', '%00', 'wait=99999999999', 'wait=-1', '"', '""'];

  let tally = { requests: 0, fiveXx: 0, byStatus: {} as Record<number, number> };
  let otherSubmission: string;
  let acceptedMutations = 0;

  const jobCount = async (): Promise<number> =>
    Number((await stack.sql<{ n: string }>('SELECT count(*) AS n FROM job.jobs WHERE tenant_id = $1', [client.tenant]))[0]!.n);

  async function send(method: string, path: string, opts: Parameters<Stack['api']>[2] = {}): Promise<ApiResponse> {
    let r: ApiResponse;
    try {
      r = await stack.api(method, path, { token, ...opts });
    } catch (err) {
      throw new Error(`${method} ${path.slice(0, 200)}: ${(err as Error).message}`);
    }
    tally.requests++;
    tally.byStatus[r.status] = (tally.byStatus[r.status] ?? 0) + 1;
    if (r.status >= 500) tally.fiveXx++;
    if ((method === 'POST' || method === 'DELETE') && r.status < 300) acceptedMutations++;
    if (method !== 'HEAD') expectDocumented(r);
    else expect(r.status).toBeLessThan(500);
    return r;
  }

  /** Runs the requests eight at a time; returns how many mutations among them were accepted (2xx: a job each). */
  async function all(requests: (() => Promise<ApiResponse>)[]): Promise<number> {
    const before = acceptedMutations;
    for (let i = 0; i < requests.length; i += 8) await Promise.all(requests.slice(i, i + 8).map((f) => f()));
    return acceptedMutations - before;
  }

  beforeAll(async () => {
    tally = { requests: 0, fiveXx: 0, byStatus: {} };
    const s = await stack.api('POST', '/v1/submissions', { token, json: validSubmission(), headers: { prefer: 'wait=10' } });
    otherSubmission = s.body.submissionId;
  });
  afterAll(() => {
    console.log(`hostile suite: ${JSON.stringify(tally)}`);
  });

  const readRoutes = (): [string, string, string[]][] => [
    ['GET', '/v1/health', []],
    ['GET', '/v1/policies', ['limit', 'cursor', 'status', 'productId', 'policyNumber', 'updatedSince']],
    ['GET', `/v1/policies/${randomUUID()}`, []],
    ['GET', `/v1/submissions/${otherSubmission}`, []],
    ['GET', `/v1/jobs/job_${'0'.repeat(32)}`, []],
    ['GET', `/v1/submissions/${otherSubmission}/attachments`, ['limit', 'cursor']],
    ['GET', `/v1/submissions/${otherSubmission}/attachments/${randomUUID()}`, []],
    ['GET', `/v1/submissions/${otherSubmission}/attachments/${randomUUID()}/content`, []],
    ['HEAD', `/v1/submissions/${otherSubmission}/attachments/${randomUUID()}/content`, []],
    ['DELETE', `/v1/submissions/${otherSubmission}/attachments/${randomUUID()}`, []],
    ['POST', '/v1/submissions', []],
    ['POST', `/v1/submissions/${otherSubmission}/attachments`, []],
    ['GET', '/v1/webhook-endpoints', ['limit', 'cursor']],
    ['GET', `/v1/webhook-endpoints/we_${'0'.repeat(32)}/deliveries`, ['limit', 'cursor', 'status', 'eventId']],
    ['GET', `/v1/webhook-endpoints/we_${'0'.repeat(32)}`, []],
  ];

  it('query parameters: every value in every known parameter, an unknown one, names, repeats and raw escapes', async () => {
    const before = await jobCount();
    const requests: (() => Promise<ApiResponse>)[] = [];
    for (const [method, path, params] of readRoutes()) {
      const json = method === 'POST' && !path.endsWith('attachments') ? validSubmission() : undefined;
      const names = [...params, 'x'];
      for (const name of names) for (const v of ALL_VALUES) requests.push(() => send(method, `${path}?${name}=${enc(v)}`, json ? { json } : {}));
      for (const v of [...TEXT.slice(0, 8), ...RAW_QUERY]) requests.push(() => send(method, `${path}?${v.startsWith('%') ? v : enc(v)}x=1`, json ? { json } : {}));
      for (const raw of RAW_QUERY) requests.push(() => send(method, `${path}?${names[0]}=${raw}`, json ? { json } : {}));
      for (const name of names) requests.push(() => send(method, `${path}?${name}=1&${name}=2`, json ? { json } : {}));
    }
    // Every query string above is refused before a job exists (the mutations had hostile queries).
    const accepted = await all(requests);
    expect(await jobCount()).toBe(before + accepted);
    expect(tally.fiveXx).toBe(0);
  });

  it('path ids: every value in every id segment', async () => {
    const requests: (() => Promise<ApiResponse>)[] = [];
    const before = await jobCount();
    for (const v of ALL_VALUES) {
      const id = enc(v) || '%20';
      for (const [method, path] of [
        ['GET', `/v1/policies/${id}`],
        ['GET', `/v1/submissions/${id}`],
        ['GET', `/v1/jobs/${id}`],
        ['GET', `/v1/submissions/${id}/attachments`],
        ['GET', `/v1/submissions/${otherSubmission}/attachments/${id}`],
        ['GET', `/v1/submissions/${otherSubmission}/attachments/${id}/content`],
        ['DELETE', `/v1/submissions/${otherSubmission}/attachments/${id}`],
        ['POST', `/v1/submissions/${id}/attachments`],
      ] as const) {
        requests.push(() => send(method, path));
      }
    }
    expect(await all(requests)).toBe(0);
    expect(await jobCount()).toBe(before);
    expect(tally.fiveXx).toBe(0);
  });

  it('headers: Idempotency-Key, Prefer, x-principal-id, X-Request-Id and Authorization on every route', async () => {
    const before = await jobCount();
    const requests: (() => Promise<ApiResponse>)[] = [];
    for (const [method, path] of readRoutes()) {
      const json = method === 'POST' && !path.endsWith('attachments') ? validSubmission() : undefined;
      for (const v of HEADER_VALUES) {
        for (const header of ['idempotency-key', 'prefer', 'x-principal-id', 'x-request-id']) {
          // A valid body under a hostile Prefer or X-Request-Id may be accepted: counted below.
          requests.push(() => send(method, path, { headers: { [header]: header === 'prefer' ? v.replace(/=\d{3,}/, '=0') : v }, ...(json ? { json } : {}) }));
        }
        requests.push(() => send(method, path, { token: undefined, headers: { authorization: `Bearer ${v}` } }));
      }
    }
    const accepted = await all(requests);
    expect(await jobCount()).toBe(before + accepted);
    expect(tally.fiveXx).toBe(0);
  });

  it('JSON body: every value in every field of POST /v1/submissions, as strings, numbers and nested', async () => {
    const before = await jobCount();
    const fields = ['externalRef', 'submissionType', 'effectiveDate', 'productId', 'applicant.legalName'];
    const requests: (() => Promise<ApiResponse>)[] = [];
    const withField = (field: string, value: unknown) => {
      const body = validSubmission() as Record<string, unknown>;
      if (field === 'applicant.legalName') body.applicant = { legalName: value };
      else body[field] = value;
      return body;
    };
    for (const field of fields) {
      for (const v of ALL_VALUES) requests.push(() => send('POST', '/v1/submissions', { json: withField(field, v) }));
      for (const v of [1e308, -1, 0, 2 ** 53 + 1, true, null, [], {}, ['a\u0000'], { k: '\ud800' }]) requests.push(() => send('POST', '/v1/submissions', { json: withField(field, v) }));
    }
    for (const name of ['a\u0000b', '\ud800', '__proto__', 'constructor']) requests.push(() => send('POST', '/v1/submissions', { json: { ...validSubmission(), [name]: 'x' } }));
    // Huge numbers as literal JSON text.
    for (const n of ['1e999', '-1e999', '123456789012345678901234567890']) {
      requests.push(() => send('POST', '/v1/submissions', { body: `{"externalRef":${n}}`, headers: { 'content-type': 'application/json' } }));
    }
    const accepted = await all(requests);
    expect(await jobCount()).toBe(before + accepted);
    expect(tally.fiveXx).toBe(0);
  });

  it('multipart form fields: every value as documentType and as the file name', async () => {
    const before = await jobCount();
    const requests: (() => Promise<ApiResponse>)[] = [];
    for (const v of ALL_VALUES) {
      requests.push(() => {
        const form = new FormData();
        form.append('documentType', v);
        form.append('file', new Blob([Buffer.from('hostile')], { type: 'text/plain' }), 'h.txt');
        return send('POST', `/v1/submissions/${otherSubmission}/attachments`, { body: form });
      });
      requests.push(() => {
        const form = new FormData();
        form.append('file', new Blob([Buffer.from('hostile')], { type: 'text/plain' }), v.replace(/[\ud800-\udfff]/g, '') || 'x');
        return send('POST', `/v1/submissions/${otherSubmission}/attachments`, { body: form });
      });
    }
    const accepted = await all(requests);
    expect(await jobCount()).toBe(before + accepted);
    expect(tally.fiveXx).toBe(0);
  });

  it('any string with a control character or a lone surrogate in any body field is 400 naming that field (fast-check)', async () => {
    const before = await jobCount();
    const fields = ['externalRef', 'applicant.legalName'] as const;
    const bad = fc
      .tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\u0000', '\u0008', '\u001f', '\u007f', '\ud800', '\udbff', '\udc00', '\udfff'), fc.string({ maxLength: 10 }))
      .map(([a, c, b]) => `${a}${c}${b}`);
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), bad, async (field, value) => {
        const body = validSubmission() as Record<string, unknown>;
        if (field === 'applicant.legalName') body.applicant = { legalName: value };
        else body.externalRef = value;
        const r = await send('POST', '/v1/submissions', { json: body });
        if (r.status < 300) accepted++;
        expect(r.status).toBe(400);
        expect(r.body.error.details).toContainEqual(expect.objectContaining({ field }));
      }),
      { numRuns: 60 },
    );
    expect(accepted).toBe(0);
    expect(await jobCount()).toBe(before);
  });
});
