// Signed receipts end to end (issue 32), against real PostgreSQL, NATS JetStream, gRPC and HTTP:
// every receipt verifies with jose against the served key set, its claims equal the records, its
// content hash equals an independent RFC 8785 implementation's hash of the body sent; the chain
// links; lists are partner-isolated; a redelivered create answers its first receipt; the keys are
// cacheable; after `key rotate --receipts` old receipts still verify and new ones carry the new kid;
// and `partner receipts verify` (offline) refuses one changed byte and one removed receipt, the first one
// included unless told where the chain starts (--from-seq N --prev HASH), and refuses a wrong --prev.
import { afterAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { canonicalize } from 'json-canonicalize';
import { createClient, serviceDefs } from '@partner/shared/grpc';
import { ROOT } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { fileBytes, multipartBytes, upload } from './support/attachments.js';
import { until } from './support/poll.js';

const PRODUCT = '11111111-2222-4333-8444-555555555555';
const CLI = join(ROOT, 'sdk/cli/dist/main.js');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- receipt claims are checked field by field
type Claims = Record<string, any>;

let token: string;
let cliEnv: Record<string, string>;
let otherToken: string;
let dir: string;

const stack = useStack(async (stack) => {
  await stack.startAll();
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Receipts test product');
  const creds = await stack.createClient();
  token = await stack.token(creds);
  cliEnv = { PARTNER_BASE_URL: stack.gatewayUrl, PARTNER_AUTH_URL: stack.authUrl, PARTNER_CLIENT_ID: creds.clientId, PARTNER_CLIENT_SECRET: creds.clientSecret, PARTNER_SCOPE: stack.scope };
  otherToken = await stack.token(await stack.createClient());
  dir = mkdtempSync(join(tmpdir(), 'receipts-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function keys(): Promise<JSONWebKeySet & { keys: Claims[] }> {
  const r = await stack.api('GET', '/.well-known/receipt-keys.json');
  expect(r.status).toBe(200);
  return r.body;
}

async function verify(jws: string, jwks?: JSONWebKeySet): Promise<{ claims: Claims; kid: string }> {
  const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(jwks ?? (await keys())), { algorithms: ['ES256'] });
  expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'receipt+jws' });
  return { claims: JSON.parse(new TextDecoder().decode(payload)) as Claims, kid: protectedHeader.kid! };
}

/** A create body as a partner might send it: keys out of order, a FEIN with its dash, white space the name loses. */
const sentBody = (ref: string) => ({
  submissionType: 'application',
  applicant: { taxId: '12-3456789', legalName: '  Acme   Holdings  LLC ', address: { country: 'US', line1: '1 Main St', city: 'Springfield', region: 'IL', postalCode: '62701' } },
  externalRef: ref,
  productId: PRODUCT.toUpperCase(),
  effectiveDate: '2027-01-01',
});

async function create(t = token, ref = `rcpt-${randomUUID()}`) {
  const body = sentBody(ref);
  const r = await stack.api('POST', '/v1/submissions', { token: t, headers: { prefer: 'wait=10' }, json: body });
  expect(r.status).toBe(200);
  return { body, result: r.body };
}

async function chain(t = token, query = ''): Promise<Claims[]> {
  const items: Claims[] = [];
  let cursor = '';
  do {
    const r = await stack.api('GET', `/v1/receipts?limit=7${query}${cursor ? `&cursor=${cursor}` : ''}`, { token: t });
    expect(r.status).toBe(200);
    items.push(...r.body.items);
    cursor = r.body.nextCursor ?? '';
  } while (cursor);
  return items;
}

function partnerCli(args: string[], stdin?: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

describe('a submission receipt', () => {
  it('verifies against the served keys, its claims equal the records, its hash is the RFC 8785 hash of the body as sent', async () => {
    const { body, result } = await create();
    expect(typeof result.receipt).toBe('string');
    const { claims, kid } = await verify(result.receipt);
    const jwks = await keys();
    expect(jwks.keys.map((k) => k.kid)).toContain(kid);

    const submission = (await stack.api('GET', `/v1/submissions/${result.submissionId}`, { token })).body;
    const job = (await stack.api('GET', `/v1/jobs/${claims.jobId}`, { token })).body;
    expect(job.result.receipt).toBe(result.receipt);
    expect(claims).toMatchObject({
      iss: stack.baseUrl,
      kind: 'submission.received',
      submissionId: submission.submissionId,
      externalRef: submission.externalRef,
      receivedAt: job.createdAt,
      content: { canon: 'RFC8785', sha256: sha256(canonicalize(body)) },
    });
    expect(claims.partnerId).toEqual(expect.any(String));
    expect(claims.tenant).toEqual(expect.any(String));
    // The hash is of what was sent, not of what was stored (the FEIN is stored as 9 digits).
    expect(submission.submissionName).toBe('Acme Holdings LLC');
    expect(submission.applicant.taxId).toBe('123456789');
    expect(claims.content.sha256).not.toBe(sha256(canonicalize({ ...body, applicant: submission.applicant })));
    expect(Math.abs(claims.iat * 1000 - Date.parse(job.updatedAt))).toBeLessThan(5_000);
    const listed = (await stack.api('GET', `/v1/submissions/${result.submissionId}/receipts`, { token })).body;
    expect(listed).toEqual({ items: [{ seq: claims.seq, kind: 'submission.received', submissionId: result.submissionId, jws: result.receipt, issuedAt: expect.any(String) }], nextCursor: null });
    expect(Math.floor(Date.parse(listed.items[0].issuedAt) / 1000)).toBe(claims.iat);
  });

  it('an attachment gets one too, naming the file', async () => {
    const { result } = await create();
    const data = fileBytes('application/pdf', 2048);
    const res = await upload(stack, token, result.submissionId, multipartBytes({ fileName: 'loss-runs.pdf', contentType: 'application/pdf', data }, { documentType: 'loss_run' }), {
      prefer: 'wait=10',
    });
    expect(res.status).toBe(200);
    const { claims } = await verify(res.body.receipt);
    expect(claims).toMatchObject({
      kind: 'attachment.received',
      submissionId: result.submissionId,
      attachment: { attachmentId: res.body.attachmentId, fileName: 'loss-runs.pdf', contentType: 'application/pdf', sizeBytes: 2048, sha256: createHash('sha256').update(data).digest('hex') },
    });
    expect(claims.content).toBeUndefined();
    // GET of the record shows no receipt; the submission's receipts list both, in seq order.
    const record = (await stack.api('GET', `/v1/submissions/${result.submissionId}/attachments/${res.body.attachmentId}`, { token })).body;
    expect(record.receipt).toBeUndefined();
    const listed = (await stack.api('GET', `/v1/submissions/${result.submissionId}/receipts`, { token })).body.items;
    expect(listed.map((r: Claims) => r.kind)).toEqual(['submission.received', 'attachment.received']);
    expect(listed[1].seq).toBe(listed[0].seq + 1);
  });

  it('a redelivered create answers its first receipt and takes no seq', async () => {
    const { result } = await create();
    const { claims } = await verify(result.receipt);
    const before = await chain();
    // The worker's call again, as a redelivery makes it (same job id): the same submission and receipt.
    const client = createClient(serviceDefs().submission, stack.env.SUBMISSION_GRPC_ADDR!, 10_000);
    try {
      const again = await client.CreateSubmission({
        jobId: claims.jobId,
        owner: { tenantId: claims.tenant, partnerId: claims.partnerId },
        externalRef: claims.externalRef,
        submissionType: 'application',
        effectiveDate: '2027-01-01',
        productId: PRODUCT,
        applicant: { legalName: 'Acme' },
        contentSha256: 'f'.repeat(64),
        receivedAt: new Date().toISOString(),
      });
      expect(again.submission?.submissionId).toBe(result.submissionId);
      expect(again.receipt).toBe(result.receipt);
    } finally {
      client.close();
    }
    expect(await chain()).toEqual(before);
  });
});

describe('the chain', () => {
  it('is the partner\'s, 1..n without gaps, each prev the hash of the receipt before; another partner sees none of it', async () => {
    await create();
    await create();
    const items = await chain();
    expect(items.map((r) => r.seq)).toEqual(items.map((_, i) => i + 1));
    const jwks = await keys();
    for (const [i, item] of items.entries()) {
      const { claims } = await verify(item.jws, jwks);
      expect(claims.seq).toBe(item.seq);
      expect(claims.prev).toBe(i === 0 ? null : sha256(items[i - 1]!.jws));
    }
    const from = await chain(token, '&afterSeq=2');
    expect(from.map((r) => r.seq)).toEqual(items.slice(2).map((r) => r.seq));

    // Another partner: its own chain from 1; our submission's receipts are 404 to it.
    const theirs = await create(otherToken);
    expect((await verify(theirs.result.receipt)).claims).toMatchObject({ seq: 1, prev: null });
    const mine = items[0]!.submissionId;
    expect((await stack.api('GET', `/v1/submissions/${mine}/receipts`, { token: otherToken })).status).toBe(404);
    expect((await chain(otherToken)).map((r) => r.submissionId)).toEqual([theirs.result.submissionId]);
  });

  it('refuses bad parameters with every one named, and a cursor of another partner or filter', async () => {
    const bad = await stack.api('GET', '/v1/receipts?afterSeq=-1&limit=0&cursor=x!&color=red', { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
    expect(bad.body.error.details.map((d: Claims) => d.field).sort()).toEqual(['afterSeq', 'color', 'cursor', 'limit']);
    const page = await stack.api('GET', '/v1/receipts?limit=1', { token });
    expect(page.body.nextCursor).toEqual(expect.any(String));
    const foreign = await stack.api('GET', `/v1/receipts?limit=1&cursor=${page.body.nextCursor}`, { token: otherToken });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details).toEqual([{ field: 'cursor', issue: expect.any(String) }]);
    const otherFilter = await stack.api('GET', `/v1/receipts?limit=1&afterSeq=1&cursor=${page.body.nextCursor}`, { token });
    expect(otherFilter.status).toBe(400);
    expect((await stack.api('GET', '/v1/submissions/not-a-uuid/receipts', { token })).status).toBe(404);
    expect((await stack.api('GET', '/v1/receipts')).status).toBe(401);
  });
});

describe('the keys', () => {
  it('are served without a token, cacheable, with an ETag that answers 304', async () => {
    const r = await stack.api('GET', '/.well-known/receipt-keys.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    expect(r.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', signedFrom: expect.any(String) });
    expect(r.body.keys[0].d).toBeUndefined();
    const again = await stack.api('GET', '/.well-known/receipt-keys.json', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const post = await stack.api('POST', '/.well-known/receipt-keys.json');
    expect(post.status).toBe(405);
    expect(post.body.error.code).toBe('method_not_allowed');
  });

  it('after key rotate --receipts old receipts still verify and new ones carry the new kid', async () => {
    const old = await create();
    const oldKid = decodeProtectedHeader(old.result.receipt).kid;
    const rotated = await stack.admin('key', 'rotate', '--receipts');
    expect(rotated).toMatchObject({ receipts: true, kid: expect.any(String), retired: [oldKid] });
    expect(rotated.kid).not.toBe(oldKid);
    const fresh = await create();
    expect(decodeProtectedHeader(fresh.result.receipt).kid).toBe(rotated.kid);
    // The gateway reuses the key set for a few seconds: the new key appears within that.
    const jwks = await until('the new key is served', async () => {
      const k = await keys();
      return k.keys.some((x) => x.kid === rotated.kid) && k;
    });
    const retired = jwks.keys.find((k) => k.kid === oldKid)!;
    expect(retired.signedUntil).toEqual(expect.any(String));
    expect(jwks.keys.find((k) => k.kid === rotated.kid)!.signedUntil).toBeUndefined();
    const a = await verify(old.result.receipt, jwks);
    const b = await verify(fresh.result.receipt, jwks);
    expect(a.claims.iat).toBeLessThanOrEqual(Math.floor(Date.parse(retired.signedUntil) / 1000));
    expect(b.claims.prev).toBe(sha256(old.result.receipt));
  });
});

describe('partner receipts verify (offline)', () => {
  it('passes the chain, and exits 1 naming the first broken link for one changed byte, one removed receipt or a removed first one unless told where the chain starts', async () => {
    await create();
    const items = await chain();
    expect(items.length).toBeGreaterThanOrEqual(4);
    const jwks = join(dir, 'jwks.json');
    writeFileSync(jwks, JSON.stringify(await keys()));
    const file = join(dir, 'receipts.json');
    writeFileSync(file, JSON.stringify({ items, nextCursor: null }));

    const ok = await partnerCli(['receipts', 'verify', file, '--jwks', jwks]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ valid: true, start: 'seq 1', receipts: items.length, firstSeq: 1, lastSeq: items.length });

    // One byte of the third receipt's payload changed.
    const tampered = items.map((r) => ({ ...r }));
    const [h, p, s] = tampered[2]!.jws.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as Claims;
    const changed = Buffer.from(JSON.stringify({ ...claims, externalRef: `${claims.externalRef.slice(0, -1)}X` })).toString('base64url');
    tampered[2]!.jws = `${h}.${changed}.${s}`;
    const bad = await partnerCli(['receipts', 'verify', '-', '--jwks', jwks], JSON.stringify(tampered));
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ valid: false, brokenAtSeq: 3 });
    expect(bad.stderr).toMatch(/receipt 3 of \d+ \(after seq 2\): the signature does not verify/);

    // The third receipt removed.
    const removed = items.filter((r) => r.seq !== 3);
    writeFileSync(file, JSON.stringify(removed));
    const gap = await partnerCli(['receipts', 'verify', file, '--jwks', jwks]);
    expect(gap.code).toBe(1);
    expect(JSON.parse(gap.stdout)).toMatchObject({ valid: false, brokenAtSeq: 3 });
    expect(gap.stderr).toContain('broken link: seq 2 is followed by seq 4 (missing 3)');

    // The first receipt removed: the check starts at seq 1 unless told otherwise, so seq 1 is missing.
    writeFileSync(file, JSON.stringify(items.slice(1)));
    const headless = await partnerCli(['receipts', 'verify', file, '--jwks', jwks]);
    expect(headless.code).toBe(1);
    expect(JSON.parse(headless.stdout)).toMatchObject({ valid: false, start: 'seq 1', brokenAtSeq: 1, missing: { fromSeq: 1, toSeq: 1 } });
    expect(headless.stderr).toContain('the chain starts at seq 2, not at the first, seq 1: missing seq 1');
    // Told where it starts (seq 2, linking to seq 1's hash: the lastHash of a check that ended at seq 1).
    writeFileSync(join(dir, 'first.json'), JSON.stringify(items.slice(0, 1)));
    const upToOne = JSON.parse((await partnerCli(['receipts', 'verify', join(dir, 'first.json'), '--jwks', jwks])).stdout) as { lastHash: string };
    const declared = await partnerCli(['receipts', 'verify', file, '--jwks', jwks, '--from-seq', '2', '--prev', upToOne.lastHash]);
    expect(declared.code, declared.stderr).toBe(0);
    expect(JSON.parse(declared.stdout)).toMatchObject({ valid: true, start: 'declared', fromSeq: 2, prev: upToOne.lastHash, firstSeq: 2, lastSeq: items.length });
    expect(declared.stderr).toMatch(/checked from the declared seq 2/);
    // A wrong --prev (seq 2's own hash), a start later than the file's first receipt, --prev without --from-seq.
    const upToTwo = JSON.parse((await partnerCli(['receipts', 'verify', '-', '--jwks', jwks], JSON.stringify(items.slice(0, 2)))).stdout) as { lastHash: string };
    const wrongPrev = await partnerCli(['receipts', 'verify', file, '--jwks', jwks, '--from-seq', '2', '--prev', upToTwo.lastHash]);
    expect(wrongPrev.code).toBe(1);
    expect(JSON.parse(wrongPrev.stdout)).toMatchObject({ valid: false, start: 'declared', brokenAtSeq: 2 });
    expect(wrongPrev.stderr).toContain("seq 2's prev is");
    const tooLate = await partnerCli(['receipts', 'verify', file, '--jwks', jwks, '--from-seq', '3', '--prev', upToTwo.lastHash]);
    expect(tooLate.code).toBe(1);
    expect(tooLate.stderr).toContain('the chain starts at seq 2, before the declared seq 3');
    expect((await partnerCli(['receipts', 'verify', file, '--jwks', jwks, '--prev', upToOne.lastHash])).code).toBe(2);
    expect((await partnerCli(['receipts', 'verify', file, '--jwks', jwks, '--from-seq', '2'])).code).toBe(2);

    // The same chain and keys as the CLI itself saves them.
    const listed = await partnerCli(['receipts', 'list', '--all', '--json'], undefined, cliEnv);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).items).toEqual(items);
    const saved = await partnerCli(['receipts', 'keys'], undefined, cliEnv);
    expect(saved.code, saved.stderr).toBe(0);
    writeFileSync(jwks, saved.stdout);
    expect((await partnerCli(['receipts', 'verify', '-', '--jwks', jwks], listed.stdout)).code).toBe(0);
    const one = await partnerCli(['receipts', 'list', '--submission', items[0]!.submissionId, '--json'], undefined, cliEnv);
    expect(JSON.parse(one.stdout).items.map((r: Claims) => r.submissionId)).toEqual([items[0]!.submissionId]);

    // Without the keys: a usage error.
    expect((await partnerCli(['receipts', 'verify', file])).code).toBe(2);
  });
});
