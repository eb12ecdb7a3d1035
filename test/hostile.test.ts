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
import { PRODUCT } from './support/fixtures.js';

const DOCUMENTED = new Set([200, 202, 304, 400, 401, 403, 404, 405, 409, 413, 415, 422, 429]);
let stack: Stack;
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

beforeAll(async () => {
  stack = await Stack.create();
  await stack.startAll();
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Fuzz product');
  client = await stack.createClient();
  token = await stack.token(client);
  const s = await stack.api('POST', '/v1/submissions', { token, json: validSubmission(), headers: { prefer: 'wait=10' } });
  submissionId = s.body.submissionId;
});
afterAll(() => stack?.stop());

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
    const key = fc.oneof(fc.constantFrom('limit', 'cursor', 'status', 'productId', 'policyNumber', 'updatedSince'), fc.string({ maxLength: 10 }));
    const value = fc.oneof(fc.string({ maxLength: 40 }), fc.integer().map(String), fc.constantFrom("' OR 1=1 --", '%00', '../..', '2025-01-01T00:00:00Z'));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, value), { maxLength: 4 }), fc.constantFrom('/v1/policies', `/v1/submissions/${submissionId}/attachments`), async (pairs, path) => {
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
    ];
    await fc.assert(
      fc.asyncProperty(segment, fc.nat({ max: 5 }), async (raw, i) => {
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
  const claims = () => ({
    iss: 'https://auth.uat.test',
    sub: client.clientId,
    aud: 'partner-submission-api',
    client_id: client.clientId,
    scope: stack.scope,
    tenant: client.tenant,
    partner_id: client.partnerId,
    permissions: ['health/read'],
    jti: randomUUID(),
  });

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
    }
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
