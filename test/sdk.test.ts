// The TypeScript SDK against the running stack: token reuse (one token request for many calls,
// also concurrently) and refresh before expiry, a fresh token after invalid_token, the resend
// after a dropped connection (same job, one submission), polling that honours Retry-After,
// non-retryable errors sent once, retryable job failures retried with a new key, cancellation, and
// every operation's typed method. Every gateway response the SDK receives is also checked against
// the OpenAPI document.
import { afterEach, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  lastResponseOf,
  PartnerApiError,
  PartnerClient,
  ReceiptVerificationError,
  verifyChain,
  verifyReceipt,
  type PartnerClientOptions,
  type ReceiptItem,
  type SubmissionCreate,
} from '../sdk/client/src/index.js';
import { conformance } from './support/conformance.js';
import { type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';

const PRODUCT = '11111111-2222-4333-8444-555555555555';
let creds: ClientCreds;

const stack = useStack(async (stack) => {
  // Short-lived tokens, so that a refresh margin of 59 s makes the next call refresh.
  await stack.startAll({ AUTH_TOKEN_TTL_SECONDS: '60' });
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'SDK test product');
  creds = await stack.createClient();
});

interface Seen {
  method: string;
  url: URL;
  at: number;
  headers: Headers;
  status?: number;
  responseHeaders?: Headers;
}

/** Conformance problems found in responses the SDK received (checked in afterEach, not thrown into the SDK). */
const nonConforming: string[] = [];
afterEach(() => {
  expect(nonConforming.splice(0)).toEqual([]);
});

/** A fetch that records every request, checks gateway responses against the document, and can fail on purpose. */
function recordingFetch(opts: { drop?: (req: Seen) => boolean; tamper?: (req: Seen, init: RequestInit) => RequestInit } = {}) {
  const seen: Seen[] = [];
  const f: typeof fetch = async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const req: Seen = { method: init.method ?? 'GET', url, at: Date.now(), headers: new Headers(init.headers) };
    seen.push(req);
    const sent = opts.tamper ? opts.tamper(req, init) : init;
    const res = await fetch(input, sent);
    req.status = res.status;
    req.responseHeaders = res.headers;
    if (url.origin === stack.gatewayUrl) {
      const text = await res.clone().text();
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      nonConforming.push(...conformance().check(req.method, url.pathname, { status: res.status, headers: res.headers, body, text }));
    }
    if (opts.drop?.(req)) {
      // The server has answered (and acted); the client never hears of it.
      await res.arrayBuffer();
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
    }
    return res;
  };
  const count = (pred: (s: Seen) => boolean) => seen.filter(pred).length;
  return {
    fetch: f,
    seen,
    tokenRequests: () => count((s) => s.url.origin === stack.authUrl && s.url.pathname === '/oauth2/token'),
    api: (method: string, path: RegExp) => seen.filter((s) => s.url.origin === stack.gatewayUrl && s.method === method && path.test(s.url.pathname)),
  };
}

function client(rec: ReturnType<typeof recordingFetch>, over: Partial<PartnerClientOptions> = {}): PartnerClient {
  return new PartnerClient({
    baseUrl: stack.gatewayUrl,
    authUrl: stack.authUrl,
    clientId: creds.clientId,
    clientSecret: creds.clientSecret,
    scope: stack.scope,
    fetch: rec.fetch,
    backoff: { baseMs: 50, maxMs: 200 },
    ...over,
  });
}

const submission = (over: Partial<SubmissionCreate> = {}): SubmissionCreate => ({
  externalRef: `sdk-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: PRODUCT,
  applicant: { legalName: 'Contoso Brokers Ltd' },
  ...over,
});

describe('tokens', () => {
  it('fetches one token for many calls, concurrent ones included', async () => {
    const rec = recordingFetch();
    const api = client(rec);
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.health()));
    expect(answers.every((h) => h.partnerId === creds.partnerId)).toBe(true);
    for (let i = 0; i < 5; i++) await api.listPolicies({ limit: 1 });
    expect(rec.tokenRequests()).toBe(1);
    expect(rec.api('GET', /./).length).toBe(15);
  });

  it('refreshes the token once it is within the margin of expiry', async () => {
    const rec = recordingFetch();
    // Tokens live 60 s; with a 59 s margin the token is due for refresh one second after it was fetched.
    const api = client(rec, { tokenRefreshMarginSeconds: 59 });
    await api.health();
    await api.health();
    expect(rec.tokenRequests()).toBe(1);
    await new Promise((r) => setTimeout(r, 1200));
    await api.health();
    expect(rec.tokenRequests()).toBe(2);
    const tokens = new Set(rec.api('GET', /\/v1\/health/).map((s) => s.headers.get('authorization')));
    expect(tokens.size).toBe(2);
  });

  it('fetches a fresh token once when the API says invalid_token', async () => {
    let tampered = false;
    const rec = recordingFetch({
      tamper: (req, init) => {
        if (tampered || req.url.pathname !== '/v1/health') return init;
        tampered = true;
        return { ...init, headers: { ...(init.headers as Record<string, string>), authorization: 'Bearer not.a.token' } };
      },
    });
    const api = client(rec);
    expect((await api.health()).status).toBe('ok');
    expect(rec.api('GET', /\/v1\/health/).map((s) => s.status)).toEqual([401, 200]);
    expect(rec.tokenRequests()).toBe(2);
  });

  it('reports refused credentials as a non-retryable auth error, asking once', async () => {
    const rec = recordingFetch();
    const api = client(rec, { clientSecret: 'sk_wrong' });
    const err = await api.health().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PartnerApiError);
    expect(err).toMatchObject({ name: 'PartnerAuthError', status: 401, code: 'invalid_client', retryable: false });
    expect(rec.tokenRequests()).toBe(1);
  });
});

describe('mutations', () => {
  it('resends after a dropped connection with the same key: the same job, one submission', async () => {
    let dropped = false;
    const rec = recordingFetch({
      drop: (req) => {
        if (dropped || req.method !== 'POST' || req.url.pathname !== '/v1/submissions') return false;
        dropped = true;
        return true;
      },
    });
    const api = client(rec);
    const body = submission();
    const result = await api.createSubmission(body);
    expect(result).toMatchObject({ submissionName: 'Contoso Brokers Ltd', status: 'submitted' });

    const posts = rec.api('POST', /^\/v1\/submissions$/);
    expect(posts).toHaveLength(2);
    const key = posts[0]!.headers.get('idempotency-key');
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(posts[1]!.headers.get('idempotency-key')).toBe(key);
    expect(posts.map((p) => p.headers.get('prefer'))).toEqual(['wait=15', 'wait=15']);
    expect(posts[1]!.responseHeaders!.get('idempotent-replayed')).toBe('true');
    const jobs = await stack.sql<{ job_id: string }>("SELECT job_id FROM job.jobs WHERE payload->>'externalRef' = $1", [body.externalRef]);
    expect(jobs).toHaveLength(1);
    const subs = await stack.sql<{ submission_id: string }>('SELECT submission_id FROM submission.submissions WHERE external_ref = $1', [body.externalRef]);
    expect(subs.map((s) => s.submission_id)).toEqual([result.submissionId]);
  });

  it('polls statusUrl no sooner than Retry-After says', async () => {
    const rec = recordingFetch();
    const api = client(rec, { wait: 0 });
    const polls: string[] = [];
    const result = await api.createSubmission(submission({ externalRef: 'sandbox:delay=6' }), { onPoll: (j) => polls.push(j.status) });
    expect(result.status).toBe('submitted');
    const [post] = rec.api('POST', /^\/v1\/submissions$/);
    expect(post!.status).toBe(202);
    expect(post!.headers.get('prefer')).toBe('wait=0');
    const gets = rec.api('GET', /^\/v1\/jobs\//);
    expect(gets.length).toBeGreaterThanOrEqual(2);
    expect(polls.length).toBe(gets.length - 1);
    const times = [post!.at, ...gets.map((g) => g.at)];
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(5000);
  });

  it('sends a non-retryable error once and reports it typed', async () => {
    const rec = recordingFetch();
    const api = client(rec);
    const err = await api.createSubmission(submission({ effectiveDate: '2027-02-30' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PartnerApiError);
    const e = err as PartnerApiError;
    expect(e).toMatchObject({ status: 400, code: 'validation_error', retryable: false, jobId: undefined });
    expect(e.details).toEqual([{ field: 'effectiveDate', issue: expect.any(String) }]);
    expect(e.requestId).toBe(rec.seen.at(-1)!.responseHeaders!.get('x-request-id'));
    expect(rec.api('POST', /./)).toHaveLength(1);

    const failed = await api.createSubmission(submission({ productId: randomUUID() })).catch((x: unknown) => x);
    expect(failed).toMatchObject({ status: 422, code: 'unknown_product', retryable: false, jobId: expect.stringMatching(/^job_/) });
    expect(rec.api('POST', /./)).toHaveLength(2);
  });

  it('tries a job that failed retryably again with a new key, a bounded number of times', async () => {
    const rec = recordingFetch();
    const api = client(rec, { maxAttempts: 2 });
    const err = await api.createSubmission(submission({ externalRef: 'sandbox:fail=unavailable' })).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: 'unavailable', retryable: true, jobId: expect.stringMatching(/^job_/) });
    const posts = rec.api('POST', /./);
    expect(posts).toHaveLength(2);
    expect(posts[0]!.headers.get('idempotency-key')).not.toBe(posts[1]!.headers.get('idempotency-key'));
  });

  it('stops waiting when its signal aborts', async () => {
    const api = client(recordingFetch(), { wait: 0 });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 300);
    const err = await api.createSubmission(submission({ externalRef: 'sandbox:delay=10' }), { signal: controller.signal }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('every operation', () => {
  it('reads policies, page by page and one by one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-policies-'));
    const file = join(dir, 'policies.jsonl');
    const line = (n: number) =>
      JSON.stringify({
        policyNumber: `SDK-${n}`,
        status: 'active',
        productId: PRODUCT,
        insured: { legalName: `Insured ${n}` },
        effectiveDate: '2026-01-01',
        expirationDate: '2027-01-01',
        premium: { amount: `${n}00.50`, currency: 'EUR' },
      });
    writeFileSync(file, [1, 2, 3].map(line).join('\n'));
    await stack.admin('policy', 'import', '--tenant', creds.tenant, '--partner', creds.partnerId, file);
    const api = client(recordingFetch());
    const page = await api.listPolicies({ limit: 2, status: 'active' });
    expect(page.items).toHaveLength(2);
    expect(page.nextCursor).toEqual(expect.any(String));
    const all = [];
    for await (const p of api.iteratePolicies({ limit: 2 })) all.push(p.policyNumber);
    expect(all.sort()).toEqual(['SDK-1', 'SDK-2', 'SDK-3']);
    const one = await api.getPolicy(page.items[0]!.policyId);
    expect(one).toEqual(page.items[0]);
  });

  it('lists receipts and verifies them offline: one, and the chain (a gap is named)', async () => {
    const api = client(recordingFetch());
    const created = await api.createSubmission(submission());
    const keys = await api.getReceiptKeys();
    const claims = await verifyReceipt(created.receipt!, keys);
    expect(claims).toMatchObject({ kind: 'submission.received', submissionId: created.submissionId });
    expect((await api.listSubmissionReceipts(created.submissionId)).items.map((r) => r.jws)).toEqual([created.receipt]);
    await api.createSubmission(submission());
    await api.createSubmission(submission());
    const chain: ReceiptItem[] = [];
    for await (const r of api.iterateReceipts({ limit: 1 })) chain.push(r);
    expect(chain.length).toBeGreaterThanOrEqual(3);
    expect((await verifyChain(chain, keys)).map((c) => c.seq)).toEqual(chain.map((_, i) => i + 1));
    expect((await api.listReceipts({ afterSeq: chain.length - 1 })).items.map((r) => r.seq)).toEqual([chain.length]);
    const gap = await verifyChain([chain[0]!, ...chain.slice(2)], keys).catch((e: unknown) => e);
    expect(gap).toBeInstanceOf(ReceiptVerificationError);
    expect((gap as ReceiptVerificationError).seq).toBe(2);
  });

  it('creates a submission, attaches, lists, downloads and deletes a file, and reads jobs', async () => {
    const api = client(recordingFetch());
    const created = await api.createSubmission(submission());
    expect((await api.getSubmission(created.submissionId)).externalRef).toMatch(/^sdk-/);
    // Settled within the wait (a 200): the result still names its job, which holds that same result.
    const answered = lastResponseOf(created)!;
    expect(answered).toMatchObject({ status: 200, jobId: expect.stringMatching(/^job_[0-9a-f]{32}$/), replayed: false });
    expect(await api.getJob(answered.jobId!)).toMatchObject({ status: 'succeeded', result: { submissionId: created.submissionId } });

    const bytes = new TextEncoder().encode('Loss runs 2021-2025: no claims.\n'.repeat(200));
    const progress: number[] = [];
    const attachment = await api.uploadAttachment(created.submissionId, new Blob([bytes], { type: 'text/plain' }), {
      fileName: 'loss runs.txt',
      documentType: 'loss_run',
      onProgress: (p) => progress.push(p.sentBytes),
    });
    expect(attachment).toMatchObject({ fileName: 'loss runs.txt', contentType: 'text/plain', sizeBytes: bytes.length, documentType: 'loss_run' });
    expect(attachment.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(progress.at(-1)).toBe(bytes.length);

    const listed = [];
    for await (const a of api.iterateAttachments(created.submissionId)) listed.push(a.attachmentId);
    expect(listed).toEqual([attachment.attachmentId]);
    // The record is the upload's result without its receipt.
    const { receipt, ...recorded } = attachment;
    expect(receipt).toEqual(expect.any(String));
    expect(await api.getAttachment(created.submissionId, attachment.attachmentId)).toEqual(recorded);

    const download = await api.downloadAttachment(created.submissionId, attachment.attachmentId);
    expect(download).toMatchObject({ contentType: 'text/plain', contentLength: bytes.length, fileName: 'loss runs.txt', sha256: attachment.sha256 });
    expect(new Uint8Array(await new Response(download.body).arrayBuffer())).toEqual(bytes);

    const started = await api.startAttachmentUpload(created.submissionId, bytes, { fileName: 'again.txt', wait: 0 });
    expect(started.settled).toBe(false);
    if (!started.settled) {
      const job = await api.waitForJob(started.job.statusUrl);
      expect(job.status).toBe('succeeded');
      expect(await api.getJob(started.job.id)).toEqual(job);
    }

    expect(await api.deleteAttachment(created.submissionId, attachment.attachmentId)).toEqual({ attachmentId: attachment.attachmentId, deleted: true });
    const gone = await api.getAttachment(created.submissionId, attachment.attachmentId).catch((e: unknown) => e);
    expect(gone).toMatchObject({ status: 404, code: 'not_found' });
  });
});
