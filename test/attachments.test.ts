// Attachments end to end, against real PostgreSQL, NATS JetStream, gRPC and HTTP: streamed
// uploads as jobs, reads, downloads, deletes, limits, hostile file names, isolation between
// partners, idempotent replays, permissions and the sweep of abandoned uploads.
import { afterAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { createLogger } from '@partner/shared/telemetry/logger';
import { createClient, openClientStream, serviceDefs } from '@partner/shared/grpc';
import { createPool, type Pool } from '@partner/shared/db/pg';
import { PgBlobStore } from '../services/submission/src/blob-store.js';
import { sweepAttachments } from '../services/submission/src/attachments.js';
import { useStack } from './support/use-stack.js';
import { download, fileBytes, MiB, memoryProbe, multipart, multipartBytes, storedRows, upload } from './support/attachments.js';
import { eventually } from './support/poll.js';

const PRODUCT = '11111111-2222-4333-8444-555555555555';
const LIMIT = 25 * MiB;

/** The stack's database, submission schema: to look at what is stored. */
let db: Pool;
let token: string;
let submissionId: string;
let other: { token: string; submissionId: string };

async function newSubmission(t: string): Promise<string> {
  const r = await stack.api('POST', '/v1/submissions', {
    token: t,
    headers: { prefer: 'wait=10' },
    json: { externalRef: 'att', submissionType: 'application', effectiveDate: '2027-01-01', productId: PRODUCT, applicant: { legalName: 'Acme' } },
  });
  expect(r.status).toBe(200);
  return r.body.submissionId as string;
}

const base = (sid = submissionId) => `/v1/submissions/${sid}/attachments`;

/** A small upload with exact content; returns the response and the bytes. */
async function uploadSmall(opts: { fileName?: string; contentType?: string; size?: number; fields?: Record<string, string>; headers?: Record<string, string>; t?: string; sid?: string; data?: Buffer } = {}) {
  const data = opts.data ?? fileBytes((opts.contentType ?? 'application/pdf').split(';')[0]!, opts.size ?? 1000);
  const form = multipartBytes({ fileName: opts.fileName ?? 'doc.pdf', contentType: opts.contentType ?? 'application/pdf', data }, opts.fields ?? {});
  const res = await upload(stack, opts.t ?? token, opts.sid ?? submissionId, form, opts.headers ?? {});
  return { res, data };
}

const stack = useStack(async (stack) => {
  await stack.startAll();
  db = createPool({ url: stack.env.DATABASE_URL!, schema: 'submission', max: 2, applicationName: 'attachments-test', logger: createLogger('test', 'silent') });
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test GL');
  token = await stack.token(await stack.createClient());
  submissionId = await newSubmission(token);
  const otherToken = await stack.token(await stack.createClient());
  other = { token: otherToken, submissionId: await newSubmission(otherToken) };
});
afterAll(async () => {
  await db?.end();
});

describe('upload and download', () => {
  it('round-trips a multi-megabyte binary file byte for byte', async () => {
    const form = multipart({ fileName: 'loss run 2024.pdf', contentType: 'application/pdf', size: 8 * MiB + 12_345 }, { documentType: 'loss_run' });
    const t0 = performance.now();
    const r = await upload(stack, token, submissionId, form);
    const uploadMs = performance.now() - t0;
    const sent = await form.sent;
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      attachmentId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      submissionId,
      fileName: 'loss run 2024.pdf',
      contentType: 'application/pdf',
      sizeBytes: sent.size,
      sha256: sent.sha256,
      documentType: 'loss_run',
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      receipt: expect.any(String),
    });
    const id = r.body.attachmentId as string;

    // The record is the result without the receipt (test/receipts.test.ts checks the receipt).
    const record = await stack.api('GET', `${base()}/${id}`, { token });
    expect(record.status).toBe(200);
    const { receipt: _receipt, ...asRecorded } = r.body;
    expect(record.body).toEqual(asRecorded);

    const t1 = performance.now();
    const d = await download(stack, token, `${base()}/${id}/content`);
    const downloadMs = performance.now() - t1;
    expect(d.status).toBe(200);
    expect(d.size).toBe(sent.size);
    expect(d.sha256).toBe(sent.sha256);
    expect(d.headers.get('content-type')).toBe('application/pdf');
    expect(d.headers.get('content-length')).toBe(String(sent.size));
    expect(d.headers.get('etag')).toBe(`"${sent.sha256}"`);
    expect(d.headers.get('content-disposition')).toBe(`attachment; filename="loss run 2024.pdf"; filename*=UTF-8''loss%20run%202024.pdf`);
    expect(d.headers.get('x-content-type-options')).toBe('nosniff');
    console.log(
      `8 MiB round trip: upload+job ${uploadMs.toFixed(0)} ms (${(sent.size / MiB / (uploadMs / 1000)).toFixed(1)} MiB/s), ` +
        `download ${downloadMs.toFixed(0)} ms (${(sent.size / MiB / (downloadMs / 1000)).toFixed(1)} MiB/s)`,
    );

    // HEAD: the download's headers, no bytes (and no stream opened behind it).
    const head = await fetch(`${stack.gatewayUrl}${base()}/${id}/content`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(sent.size));
    expect(head.headers.get('etag')).toBe(`"${sent.sha256}"`);
    expect(head.headers.get('content-disposition')).toBe(d.headers.get('content-disposition'));
    expect((await head.arrayBuffer()).byteLength).toBe(0);

    // If-None-Match with the ETag: 304 without a body; a stale one: the content again.
    const cached = await download(stack, token, `${base()}/${id}/content`, { 'if-none-match': `W/"x", "${sent.sha256}"` });
    expect(cached.status).toBe(304);
    expect(cached.size).toBe(0);
    expect(cached.headers.get('etag')).toBe(`"${sent.sha256}"`);
    expect((await download(stack, token, `${base()}/${id}/content`, { 'if-none-match': '"stale"' })).status).toBe(200);

    // Stored in rows of at most 256 KiB, the whole file once.
    const rows = await db.query<{ n: string; biggest: number; total: string }>(
      'SELECT count(*) AS n, max(octet_length(data)) AS biggest, sum(octet_length(data)) AS total FROM attachment_chunks WHERE blob_key = $1',
      [id],
    );
    expect(rows.rows[0]!.biggest).toBe(256 * 1024);
    expect(Number(rows.rows[0]!.total)).toBe(sent.size);
    expect(Number(rows.rows[0]!.n)).toBe(Math.ceil(sent.size / (256 * 1024)));
  });

  it("keeps the gateway's memory flat while a 25 MiB file streams through", async () => {
    // The probe must see a buffered file: hold 25 MiB of chunks and look.
    const check = memoryProbe();
    const held: Buffer[] = [];
    for (let i = 0; i < 400; i++) held.push(randomBytes(64 * 1024));
    await new Promise((r) => setTimeout(r, 250));
    const buffered = check.stop();
    expect(buffered.peak - buffered.baseline).toBeGreaterThan(24 * MiB);
    held.length = 0;

    // Every service runs in this process, so this bounds the gateway, the gRPC stream and the
    // submission service together.
    const form = multipart({ fileName: 'big.tiff', contentType: 'image/tiff', size: LIMIT });
    const probe = memoryProbe();
    const t0 = performance.now();
    const r = await upload(stack, token, submissionId, form);
    const ms = performance.now() - t0;
    const mem = probe.stop();
    expect(r.status).toBe(200);
    expect(r.body.sizeBytes).toBe(LIMIT);
    expect(r.body.sha256).toBe((await form.sent).sha256);
    const growth = mem.peak - mem.baseline;
    console.log(
      `25 MiB upload: ${ms.toFixed(0)} ms (${(25 / (ms / 1000)).toFixed(1)} MiB/s with a full GC every 100 ms), ` +
        `live heap+buffers growth ${(growth / MiB).toFixed(2)} MiB over ${mem.samples} samples (a buffered file showed ${((buffered.peak - buffered.baseline) / MiB).toFixed(1)} MiB)`,
    );
    expect(growth).toBeLessThan(10 * MiB);
  });

  it('answers 202 with a job handle without Prefer: wait; the job result is the attachment record', async () => {
    const xlsx = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    const form = multipartBytes({ fileName: 'sov.xlsx', contentType: 'application/octet-stream', data: fileBytes(xlsx, 5000) }, { documentType: 'schedule_of_values' });
    const r = await upload(stack, token, submissionId, form, { prefer: '' });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ id: expect.stringMatching(/^job_/), status: 'accepted', statusUrl: `${stack.baseUrl}/v1/jobs/${r.body.id}` });
    const job = await stack.api('GET', `/v1/jobs/${r.body.id}`, { token, headers: { prefer: 'wait=10' } });
    expect(job.body.status).toBe('succeeded');
    expect(job.body.result).toMatchObject({
      fileName: 'sov.xlsx',
      // application/octet-stream is resolved by the extension.
      contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      sizeBytes: 5000,
      documentType: 'schedule_of_values',
    });
  });

  it('takes documentType after the file part too, and defaults it to other', async () => {
    const data = randomBytes(300);
    const boundary = 'b0undary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\n`),
      data,
      Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="documentType"\r\n\r\nfinancials\r\n--${boundary}--\r\n`),
    ]);
    const after = await upload(stack, token, submissionId, { contentType: `multipart/form-data; boundary=${boundary}`, body });
    expect(after.status).toBe(200);
    expect(after.body.documentType).toBe('financials');
    const { res } = await uploadSmall({ fileName: 'notes.txt', contentType: 'text/plain; charset=utf-8' });
    expect(res.status).toBe(200);
    expect(res.body.documentType).toBe('other');
    expect(res.body.contentType).toBe('text/plain');
  });
});

describe('limits and refusals', () => {
  it('answers 413 as soon as the limit is crossed, with nothing left stored', async () => {
    const before = await storedRows(db);
    const u = new URL(stack.gatewayUrl);
    const boundary = 'lim1t';
    // A raw multipart upload (no agent: its own connection), its length announced by `framing`.
    const rawUpload = (framing: Record<string, string>) =>
      http.request({
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: base(),
        agent: false,
        headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, ...framing },
      });
    // Chunked (no Content-Length): refused while streaming. Observe how much the client had sent.
    const outcome = await new Promise<{ status: number; body: string; sentAtResponse: number }>((resolve, reject) => {
      let written = 0;
      let stop = false;
      const req = rawUpload({ 'transfer-encoding': 'chunked' });
      req.on('response', (res) => {
        const sentAtResponse = written;
        stop = true;
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, sentAtResponse }));
      });
      req.on('error', (err) => (stop ? undefined : reject(err)));
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
      const pump = () => {
        while (!stop && written < 100 * MiB) {
          written += 64 * 1024;
          if (!req.write(randomBytes(64 * 1024))) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.body)).toEqual({
      error: { code: 'payload_too_large', message: `the file may be at most ${LIMIT} bytes`, retryable: false },
    });
    // Answered once 25 MiB had passed, long before the 100 MiB the client meant to send (the slack
    // is what sat in socket buffers, and what was drained before the answer reached the client).
    expect(outcome.sentAtResponse).toBeGreaterThan(LIMIT);
    expect(outcome.sentAtResponse).toBeLessThan(LIMIT + 40 * MiB);
    // The service removed the partial upload before the 413 went out.
    expect(await storedRows(db)).toEqual(before);

    // With a Content-Length over the limit: refused before a byte of the body is read.
    const declared = await new Promise<number>((resolve, reject) => {
      const req = rawUpload({ 'content-length': String(LIMIT * 4) });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', () => undefined);
      req.write('--lim1t\r\n');
      setTimeout(() => reject(new Error('no early answer')), 5_000);
    });
    expect(declared).toBe(413);

    // Exactly one byte over, through fetch: 413, nothing stored.
    const over = await upload(stack, token, submissionId, multipart({ fileName: 'over.pdf', contentType: 'application/pdf', size: LIMIT + 1 }));
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('payload_too_large');
    expect(await storedRows(db)).toEqual(before);
  });

  it('answers 415 for a body that is not multipart and for file types outside the allowlist', async () => {
    const before = await storedRows(db);
    const json = await stack.api('POST', base(), { token, json: { file: 'x' } });
    expect(json.status).toBe(415);
    expect(json.body.error.code).toBe('unsupported_media_type');
    const none = await stack.api('POST', base(), { token });
    expect(none.status).toBe(415);

    for (const [fileName, contentType] of [
      ['setup.exe', 'application/x-msdownload'],
      ['page.html', 'text/html'],
      ['image.svg', 'image/svg+xml'],
      ['blob.bin', 'application/octet-stream'],
      ['archive.zip', 'application/zip'],
    ] as const) {
      const { res } = await uploadSmall({ fileName, contentType, size: 100_000 });
      expect(res.status, `${fileName} ${contentType}`).toBe(415);
      expect(res.body.error.code).toBe('unsupported_media_type');
      expect(res.body.error.message).toContain('application/pdf');
    }
    expect(await storedRows(db)).toEqual(before);
  });

  it('refuses malformed forms with 400 and leaves nothing staged', async () => {
    const before = await storedRows(db);
    const bad = await uploadSmall({ fields: { documentType: 'invoice' } });
    expect(bad.res.status).toBe(400);
    expect(bad.res.body.error).toMatchObject({ code: 'validation_error', details: [{ field: 'documentType' }] });
    expect((await uploadSmall({ fields: { note: 'hi' } })).res.status).toBe(400);
    expect((await uploadSmall({ size: 0 })).res.body.error).toMatchObject({ code: 'validation_error', details: [{ field: 'file', issue: 'the file is empty' }] });

    const noFile = multipartBytes({ fileName: 'x.pdf', contentType: 'application/pdf', data: randomBytes(10), name: 'document' });
    expect((await upload(stack, token, submissionId, noFile)).status).toBe(400);

    // A bad documentType after the file: the file is staged by then, and discarded again.
    const boundary = 'late';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
      randomBytes(2 * MiB),
      Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="documentType"\r\n\r\nbogus\r\n--${boundary}--\r\n`),
    ]);
    const late = await upload(stack, token, submissionId, { contentType: `multipart/form-data; boundary=${boundary}`, body });
    expect(late.status).toBe(400);
    expect(late.body.error).toMatchObject({ code: 'validation_error', details: [{ field: 'documentType' }] });
    // Removed before the 400 went out, not some time after it.
    expect(await storedRows(db)).toEqual(before);

    // A second file after the first, whole one: the same.
    const twice = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
      randomBytes(2 * MiB),
      Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
      randomBytes(1000),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const second = await upload(stack, token, submissionId, { contentType: `multipart/form-data; boundary=${boundary}`, body: twice });
    expect(second.status).toBe(400);
    expect(second.body.error).toMatchObject({ code: 'validation_error', details: [{ field: 'file' }] });
    expect(await storedRows(db)).toEqual(before);
  });
});

/**
 * The first `bytes` of a body, then nothing more: the sender stalls half-way until it gives up. (A
 * body sent whole and aborted later may already have reached the gateway complete on a slow machine,
 * and a complete request is rightly carried out.)
 */
function stallAfter(body: ReadableStream<Uint8Array>, bytes: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent >= bytes) return new Promise<void>(() => undefined);
      const { value, done } = await reader.read();
      if (done) return controller.close();
      sent += value.length;
      controller.enqueue(value);
    },
  });
}

describe('interrupted uploads', () => {
  it('keeps nothing of an upload whose client disconnects half-way', async () => {
    const before = await storedRows(db);
    const abort = new AbortController();
    const form = multipart({ fileName: 'cut.pdf', contentType: 'application/pdf', size: 20 * MiB });
    const res = fetch(`${stack.gatewayUrl}${base()}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': form.contentType },
      body: stallAfter(form.body, 8 * MiB),
      duplex: 'half',
      redirect: 'error',
      window: null,
      signal: abort.signal,
    } as RequestInit).catch((err: unknown) => err);
    // Wait until the upload is under way in the service, then go away.
    await eventually(() => storedRows(db), (s) => (s.states.receiving ?? 0) === 1 && s.chunkRows > before.chunkRows, 30_000);
    abort.abort();
    expect(await res).toBeInstanceOf(Error);
    expect(await eventually(() => storedRows(db), (s) => JSON.stringify(s) === JSON.stringify(before), 20_000)).toEqual(before);
  });

  it('refuses an upload stream that stops without its end message, or whose end does not match', async () => {
    const me = await stack.api('GET', '/v1/health', { token });
    const client = createClient(serviceDefs().submission, stack.env.SUBMISSION_GRPC_ADDR!, 5_000);
    const before = await storedRows(db);
    const start = async () => {
      const call = openClientStream(client, serviceDefs().submission, 'UploadAttachment', { timeoutMs: 10_000 });
      await call.write({
        metadata: { owner: { tenantId: me.body.tenant, partnerId: me.body.partnerId }, submissionId, fileName: 'p.pdf', contentType: 'application/pdf', maxSizeBytes: LIMIT },
      });
      for (let i = 0; i < 5; i++) await call.write({ chunk: randomBytes(64 * 1024) });
      return call;
    };
    try {
      const noEnd = await start();
      await expect(noEnd.finish()).rejects.toMatchObject({ code: 'unavailable', message: 'the upload ended before it was complete' });
      const wrongEnd = await start();
      await wrongEnd.write({ end: { sizeBytes: 5 * 64 * 1024, sha256: '0'.repeat(64) } });
      await expect(wrongEnd.finish()).rejects.toMatchObject({ code: 'unavailable' });
    } finally {
      client.close();
    }
    expect(await storedRows(db)).toEqual(before);
  });
});

describe('file names', () => {
  const cases: [raw: string, stored: string][] = [
    ['../../etc/passwd.txt', 'passwd.txt'],
    ['..\\..\\windows\\system32\\evil.pdf', 'evil.pdf'],
    ['C:\\Users\\me\\Desktop\\claim.pdf', 'claim.pdf'],
    ['a\\"b\\".pdf', 'a_b_.pdf'],
    ['inv\u202Efdp.txt', 'invfdp.txt'],
    ['tab\there\u0007.pdf', 'tabhere.pdf'],
    ['  ..hidden  .pdf  ', 'hidden .pdf'],
    ['..', 'attachment'],
    ['Schadenübersicht – 2024 ✓.pdf', 'Schadenübersicht – 2024 ✓.pdf'],
    ['<script>:?*|.pdf', '_script_____.pdf'],
  ];

  it.each(cases)('stores %j as %j and serves a safe Content-Disposition', async (raw, stored) => {
    const { res, data } = await uploadSmall({ fileName: raw, contentType: 'application/pdf' });
    expect(res.status).toBe(200);
    expect(res.body.fileName).toBe(stored);
    const d = await download(stack, token, `${base()}/${res.body.attachmentId}/content`);
    expect(d.sha256).toBe(createHash('sha256').update(data).digest('hex'));
    const cd = d.headers.get('content-disposition')!;
    expect(cd).toMatch(/^attachment; filename="[\x20-\x21\x23-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
    expect(decodeURIComponent(cd.split("UTF-8''")[1]!)).toBe(stored);
  });

  it('cuts very long names to 255 bytes, keeping the extension', async () => {
    const { res } = await uploadSmall({ fileName: `${'ä'.repeat(400)}.pdf` });
    expect(res.status).toBe(200);
    expect(Buffer.byteLength(res.body.fileName)).toBeLessThanOrEqual(255);
    expect(res.body.fileName).toMatch(/^ä+\.pdf$/);
  });

  it('never lets a file name inject a header', async () => {
    // A line break inside the part's filename (encoded, RFC 5987) makes the parser ignore the part.
    const boundary = 'crlf';
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''evil.pdf%0D%0ASet-Cookie%3A%20a%3Db\r\nContent-Type: application/pdf\r\n\r\n`,
      ),
      randomBytes(100),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const r = await upload(stack, token, submissionId, { contentType: `multipart/form-data; boundary=${boundary}`, body });
    expect(r.status).toBe(400);
    expect(r.headers.get('set-cookie')).toBeNull();
    // CR/LF sent raw end the part header early; whatever is left of the name carries no line break.
    const raw = await uploadSmall({ fileName: 'x.pdf\r\nSet-Cookie: a=b' });
    expect(raw.res.headers.get('set-cookie')).toBeNull();
    if (raw.res.status === 200) expect(raw.res.body.fileName).not.toMatch(/[\r\n]/);
  });
});

describe('list and delete', () => {
  it('lists a submission’s attachments newest first, a page at a time', async () => {
    const sid = await newSubmission(token);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await uploadSmall({ sid, fileName: `p${i}.pdf` })).res.body.attachmentId as string);
    const first = await stack.api('GET', `${base(sid)}?limit=2`, { token });
    expect(first.status).toBe(200);
    expect(first.body.items.map((a: { attachmentId: string }) => a.attachmentId)).toEqual([ids[2], ids[1]]);
    expect(first.body.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await stack.api('GET', `${base(sid)}?limit=2&cursor=${first.body.nextCursor}`, { token });
    expect(second.body).toEqual({ items: [expect.objectContaining({ attachmentId: ids[0], fileName: 'p0.pdf' })], nextCursor: null });
    const all = await stack.api('GET', base(sid), { token });
    expect(all.body.items).toHaveLength(3);
    expect(all.body.nextCursor).toBeNull();

    for (const q of ['limit=0', 'limit=201', 'limit=x', 'cursor=!!', 'sort=asc', 'limit=1&limit=2', `cursor=${first.body.nextCursor}x`]) {
      const bad = await stack.api('GET', `${base(sid)}?${q}`, { token });
      expect(bad.status, q).toBe(400);
      expect(bad.body.error.code).toBe('validation_error');
    }
    // A cursor of one submission is not one of another.
    const elsewhere = await stack.api('GET', `${base()}?cursor=${first.body.nextCursor}`, { token });
    expect(elsewhere.status).toBe(400);
  });

  it('deletes as a job; afterwards the attachment is 404 and its bytes are gone', async () => {
    const { res } = await uploadSmall({ size: 600 * 1024 });
    const id = res.body.attachmentId as string;
    const del = await stack.api('DELETE', `${base()}/${id}`, { token, headers: { prefer: 'wait=10', 'idempotency-key': `del-${id}` } });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ attachmentId: id, deleted: true });
    for (const path of [`${base()}/${id}`, `${base()}/${id}/content`]) {
      const gone = await stack.api('GET', path, { token });
      expect(gone.status).toBe(404);
      expect(gone.body.error.code).toBe('not_found');
    }
    const list = await stack.api('GET', `${base()}?limit=200`, { token });
    expect(list.body.items.map((a: { attachmentId: string }) => a.attachmentId)).not.toContain(id);
    expect((await db.query('SELECT 1 FROM attachment_chunks WHERE blob_key = $1', [id])).rowCount).toBe(0);

    // Again with the same key: the same job, replayed. Without a key: 404 at once.
    const replay = await stack.api('DELETE', `${base()}/${id}`, { token, headers: { prefer: 'wait=10', 'idempotency-key': `del-${id}` } });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual({ attachmentId: id, deleted: true });
    expect((await stack.api('DELETE', `${base()}/${id}`, { token })).status).toBe(404);
    // A new key for a missing attachment: a job that fails with not_found.
    const fresh = await stack.api('DELETE', `${base()}/${id}`, { token, headers: { prefer: 'wait=10', 'idempotency-key': `del2-${id}` } });
    expect(fresh.status).toBe(404);
    expect(fresh.body).toMatchObject({ error: { code: 'not_found' }, jobId: expect.stringMatching(/^job_/) });
  });

  it('answers 404 for malformed and unknown ids', async () => {
    const unknown = '01a1f000-0000-7000-8000-000000000000';
    for (const [method, path] of [
      ['GET', '/v1/submissions/not-a-uuid/attachments'],
      ['GET', `/v1/submissions/${unknown}/attachments`],
      ['GET', `${base()}/nope`],
      ['GET', `${base()}/${unknown}`],
      ['GET', `${base()}/${unknown}/content`],
      ['DELETE', `${base()}/${unknown}`],
      ['POST', `/v1/submissions/${unknown}/attachments`],
    ] as const) {
      const r =
        method === 'POST'
          ? await upload(stack, token, unknown, multipartBytes({ fileName: 'a.pdf', contentType: 'application/pdf', data: randomBytes(10) }))
          : await stack.api(method, path, { token });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
  });
});

describe('isolation, idempotency, permissions', () => {
  it("hides another partner's submission and attachments behind 404 on every route, storing nothing", async () => {
    const { res } = await uploadSmall({ sid: other.submissionId, t: other.token });
    expect(res.status).toBe(200);
    const theirs = res.body.attachmentId as string;
    const before = await storedRows(db);
    const probes: [string, string][] = [
      ['GET', base(other.submissionId)],
      ['GET', `${base(other.submissionId)}/${theirs}`],
      ['GET', `${base(other.submissionId)}/${theirs}/content`],
      ['DELETE', `${base(other.submissionId)}/${theirs}`],
      // Their attachment id under our own submission.
      ['GET', `${base()}/${theirs}`],
      ['GET', `${base()}/${theirs}/content`],
      ['DELETE', `${base()}/${theirs}`],
    ];
    for (const [method, path] of probes) {
      const r = await stack.api(method, path, { token, headers: { prefer: 'wait=5' } });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }
    const post = await upload(stack, token, other.submissionId, multipart({ fileName: 'x.pdf', contentType: 'application/pdf', size: 3 * MiB }));
    expect(post.status).toBe(404);
    expect(await storedRows(db)).toEqual(before);
    // Still theirs, intact.
    expect((await stack.api('GET', `${base(other.submissionId)}/${theirs}`, { token: other.token })).status).toBe(200);
  });

  it('stores an upload replayed with the same Idempotency-Key once', async () => {
    const sid = await newSubmission(token);
    const data = fileBytes('application/pdf', MiB + 7);
    const headers = { 'idempotency-key': `up-${sid}` };
    const first = await uploadSmall({ sid, data, headers, fields: { documentType: 'application' } });
    expect(first.res.status).toBe(200);
    const before = await storedRows(db);
    const again = await uploadSmall({ sid, data, headers, fields: { documentType: 'application' } });
    expect(again.res.status).toBe(200);
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.res.body).toEqual(first.res.body);
    // The replay's copy was staged while it streamed, then discarded: the bytes are stored once.
    expect(await storedRows(db)).toEqual(before);
    const list = await stack.api('GET', base(sid), { token });
    expect(list.body.items).toHaveLength(1);

    // The same key with another file: 422, and that file is not kept either.
    const reused = await uploadSmall({ sid, data: randomBytes(1000), headers });
    expect(reused.res.status).toBe(422);
    expect(reused.res.body.error.code).toBe('idempotency_key_reused');
    expect(await storedRows(db)).toEqual(before);
  });

  it('needs submissions/write to upload and delete, submissions/read to read', async () => {
    // Clients of the same partner with one permission each.
    const me = await stack.api('GET', '/v1/health', { token });
    const client = (permission: string) =>
      stack.createClient({ permissions: [permission], tenant: me.body.tenant, partner: me.body.partnerId }).then((c) => stack.token(c));
    const reader = await client('submissions/read');
    const writer = await client('submissions/write');
    const { res } = await uploadSmall();
    const id = res.body.attachmentId as string;
    const before = await storedRows(db);

    const up = await upload(stack, reader, submissionId, multipart({ fileName: 'a.pdf', contentType: 'application/pdf', size: 2 * MiB }));
    expect(up.status).toBe(403);
    expect(up.body.error.code).toBe('forbidden');
    expect((await stack.api('DELETE', `${base()}/${id}`, { token: reader })).status).toBe(403);
    expect(await storedRows(db)).toEqual(before);
    for (const path of [base(), `${base()}/${id}`, `${base()}/${id}/content`]) {
      expect((await stack.api('GET', path, { token: reader })).status).toBe(200);
      const denied = await stack.api('GET', path, { token: writer });
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe('forbidden');
    }
    const byWriter = await uploadSmall({ t: writer });
    expect(byWriter.res.status).toBe(200);
  });
});

describe('the sweep', () => {
  it('removes staged uploads no job promoted, and leaves attachments alone', async () => {
    const me = await stack.api('GET', '/v1/health', { token });
    const client = createClient(serviceDefs().submission, stack.env.SUBMISSION_GRPC_ADDR!, 5_000);
    // A staged upload whose job never came: straight to the service, as the gateway would.
    const call = openClientStream(client, serviceDefs().submission, 'UploadAttachment', { timeoutMs: 10_000 });
    await call.write({
      metadata: { owner: { tenantId: me.body.tenant, partnerId: me.body.partnerId }, submissionId, fileName: 'orphan.pdf', contentType: 'application/pdf', maxSizeBytes: LIMIT },
    });
    const hash = createHash('sha256');
    for (let i = 0; i < 10; i++) {
      const chunk = randomBytes(64 * 1024);
      hash.update(chunk);
      await call.write({ chunk });
    }
    await call.write({ end: { sizeBytes: 640 * 1024, sha256: hash.digest('hex') } });
    const staged = await call.finish();
    client.close();
    expect(Number(staged.sizeBytes)).toBe(640 * 1024);

    const before = await storedRows(db);
    expect(before.states.staged).toBe(1);
    const store = new PgBlobStore(db);
    // Within their time to live, nothing is removed.
    const early = await sweepAttachments(db, store, { receivingTtlMs: 3_600_000, stagedTtlMs: 3_600_000, deletedRetentionMs: 3_600_000 });
    expect(early.abandonedRemoved).toBe(0);
    const swept = await sweepAttachments(db, store, { receivingTtlMs: 0, stagedTtlMs: 0, deletedRetentionMs: 0 });
    expect(swept.abandonedRemoved).toBe(1);
    // The records of deleted attachments went too (retention 0); their bytes were gone already.
    expect(swept.deletedDropped).toBeGreaterThanOrEqual(1);
    const after = await storedRows(db);
    expect(after.states.staged).toBeUndefined();
    expect(after.states.deleted).toBeUndefined();
    expect(after.states.active).toBe(before.states.active);
    expect(after.chunkRows).toBe(before.chunkRows - 3);
  });
});
