// The streaming helpers of streaming-rpc.ts against a real gRPC server on loopback, using the submission
// service's streaming methods with handlers written here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import { DomainError } from '../domain/errors.js';
import { createLogger } from '../telemetry/logger.js';
import {
  clientStreaming,
  createClient,
  implementWithStreaming,
  openClientStream,
  openServerStream,
  serverStreaming,
  serviceDefs,
  startGrpcServer,
  type GrpcServerHandle,
  type PromiseClient,
  type StreamingHandlers,
} from './index.js';

type Def = ReturnType<typeof serviceDefs>['submission'];

const KiB = 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logger = createLogger('test', 'silent');
const unused = async (): Promise<never> => {
  throw new DomainError('internal', 'not used here');
};

/** What the handlers saw, for the tests to inspect; note() records it and wakes whenSeen(). */
const seen = {
  received: 0,
  uploadEnded: '' as '' | 'done' | 'threw',
  uploadAborted: false,
  readReturned: false,
  readAborted: false,
};
const changes = new EventEmitter();
function note<K extends keyof typeof seen>(key: K, value: (typeof seen)[K]): void {
  seen[key] = value;
  changes.emit('change');
}
/** Resolves once the handlers have seen what holds (the test's own timeout bounds the wait). */
function whenSeen(holds: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!holds()) return;
      changes.off('change', check);
      resolve();
    };
    changes.on('change', check);
    check();
  });
}

const handlers: StreamingHandlers<Def> = {
  CreateSubmission: unused,
  GetSubmission: unused,
  ListSubmissions: unused,
  DiscardUpload: unused,
  CreateAttachment: unused,
  GetAttachment: unused,
  ListAttachments: unused,
  DeleteAttachment: unused,
  ListReceipts: unused,
  GetReceiptKeys: unused,
  WithdrawSubmission: unused,
  ReserveBind: unused,
  CompleteBind: unused,
  ReleaseBind: unused,
  SignOffer: unused,
  UploadAttachment: clientStreaming(async (requests, ctx) => {
    note('received', 0);
    note('uploadEnded', '');
    ctx.signal.addEventListener('abort', () => note('uploadAborted', true));
    let bytes = 0;
    let fileName = '';
    try {
      for await (const m of requests) {
        if (m.part === 'metadata') {
          fileName = m.metadata!.fileName;
          if (fileName === 'refuse.pdf') throw new DomainError('not_found', 'submission not found');
          continue;
        }
        note('received', seen.received + 1);
        bytes += m.chunk!.length;
        // A slow consumer: the client must wait for it rather than run ahead.
        if (fileName === 'slow.pdf') await sleep(5);
      }
    } catch (err) {
      note('uploadEnded', 'threw');
      throw err;
    }
    note('uploadEnded', 'done');
    return { uploadId: fileName, sizeBytes: bytes, sha256: '' };
  }),
  ReadAttachmentContent: serverStreaming(async function* (req, ctx) {
    note('readReturned', false);
    ctx.signal.addEventListener('abort', () => note('readAborted', true));
    try {
      const n = Number(req.attachmentId.split(':')[1] ?? 0);
      for (let i = 0; i < n; i++) {
        if (req.attachmentId.startsWith('fail') && i === 3) throw new DomainError('not_found', 'attachment not found');
        yield { chunk: Buffer.alloc(64 * KiB, i % 256) };
      }
    } finally {
      note('readReturned', true);
    }
  }),
};

let server: GrpcServerHandle;
let client: PromiseClient<Def>;
const def = () => serviceDefs().submission;
const metadata = (fileName: string) => ({
  metadata: { owner: { tenantId: 't', partnerId: 'p' }, submissionId: 's', fileName, contentType: 'application/pdf', maxSizeBytes: 1 },
});

beforeAll(async () => {
  server = await startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    services: [{ name: 'partner.submission.v1.SubmissionService', def: def(), impl: implementWithStreaming(def(), handlers, logger) }],
  });
  client = createClient(def(), `127.0.0.1:${server.port}`, 5_000);
});
afterAll(async () => {
  client?.close();
  await server?.shutdown(1_000);
});

describe('client streaming', () => {
  it('delivers every message and the response', async () => {
    const call = openClientStream(client, def(), 'UploadAttachment');
    await call.write(metadata('a.pdf'));
    for (let i = 0; i < 20; i++) await call.write({ chunk: Buffer.alloc(64 * KiB, i) });
    const res = await call.finish();
    expect(res).toEqual({ uploadId: 'a.pdf', sizeBytes: String(20 * 64 * KiB), sha256: '' });
    expect(seen.received).toBe(20);
  });

  it('holds the writer back to the pace of a slow reader (backpressure)', async () => {
    const call = openClientStream(client, def(), 'UploadAttachment');
    await call.write(metadata('slow.pdf'));
    const total = 200;
    for (let i = 0; i < total; i++) await call.write({ chunk: Buffer.alloc(64 * KiB, i) });
    // All 200 writes were accepted, yet the reader, at 5 ms a message, is close behind: what is
    // in flight is bounded by stream buffers and HTTP/2 windows, not by the upload's size.
    const behind = total - seen.received;
    await call.finish();
    expect(behind).toBeLessThan(60);
    expect(seen.received).toBe(total);
  });

  it('rejects further writes once the server has answered with an error', async () => {
    const call = openClientStream(client, def(), 'UploadAttachment');
    await call.write(metadata('refuse.pdf'));
    const err = await (async () => {
      for (let i = 0; i < 1_000; i++) await call.write({ chunk: Buffer.alloc(64 * KiB) });
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('not_found');
    await expect(call.finish()).rejects.toMatchObject({ code: 'not_found' });
  });

  it('lets the server see a cancel: its signal aborts and its requests stop', async () => {
    seen.uploadAborted = false;
    const call = openClientStream(client, def(), 'UploadAttachment');
    await call.write(metadata('slow.pdf'));
    await call.write({ chunk: Buffer.alloc(1 * KiB) });
    // The handler is reading: it has the first chunk.
    await whenSeen(() => seen.received >= 1);
    call.cancel();
    await expect(call.finish()).rejects.toMatchObject({ code: 'unavailable' });
    await whenSeen(() => seen.uploadEnded !== '' && seen.uploadAborted);
    // The requests stop, with an error or (when the reset is seen as the end of the stream first)
    // without one: only the signal tells a cancel apart, which is why uploads carry an end message.
    expect(seen.uploadEnded).not.toBe('');
    expect(seen.uploadAborted).toBe(true);
  });
});

describe('server streaming', () => {
  const read = (attachmentId: string) =>
    openServerStream(client, def(), 'ReadAttachmentContent', { owner: { tenantId: 't', partnerId: 'p' }, submissionId: 's', attachmentId });

  it('yields every message in order', async () => {
    const got: number[] = [];
    for await (const m of read('ok:40')) got.push(m.chunk[0]!);
    expect(got).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('throws the handler’s DomainError after the messages before it', async () => {
    const got: number[] = [];
    const err = await (async () => {
      for await (const m of read('fail:10')) got.push(m.chunk[0]!);
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(got).toEqual([0, 1, 2]);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('not_found');
  });

  it('cancels the call when the reader stops early; the handler is returned and its signal aborts', async () => {
    seen.readAborted = false;
    let n = 0;
    for await (const _ of read('ok:100000')) {
      if (++n === 5) break;
    }
    await whenSeen(() => seen.readReturned && seen.readAborted);
    expect(seen.readReturned).toBe(true);
    expect(seen.readAborted).toBe(true);
  });
});

describe('setup checks', () => {
  it('refuses a handler of the wrong kind', () => {
    expect(() => implementWithStreaming(def(), { ...handlers, UploadAttachment: unused } as never, logger)).toThrow(/is client, but its handler is unary/);
    expect(() => implementWithStreaming(def(), { ...handlers, GetSubmission: handlers.UploadAttachment } as never, logger)).toThrow(
      /is unary, but its handler is client/,
    );
  });

  it('refuses streaming calls on methods of another kind, and on clients it did not make', () => {
    expect(() => openClientStream(client, def(), 'GetSubmission')).toThrow(/not a client-streaming method/);
    expect(() => openServerStream(client, def(), 'UploadAttachment', {} as never)).toThrow(/not a server-streaming method/);
    expect(() => openClientStream({ close() {} } as never, def(), 'UploadAttachment')).toThrow(/createClient/);
  });
});
