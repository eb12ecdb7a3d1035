// Attachments under /v1/submissions/{id}/attachments: reads (submissions/read) and mutations
// (submissions/write, run as jobs). An upload is streamed into the submission service and staged
// there before its attachment.create job is queued; the job carries the staged upload's id, never
// the bytes. A submission of another partner is 404 for every operation, checked before any byte
// of an upload is read.
import type Router from '@koa/router';
import { Readable } from 'node:stream';
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { openServerStream } from '@partner/shared/grpc';
import { isUuid } from '@partner/shared/domain/ids';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { serviceDefs } from '@partner/shared/grpc';
import { attachmentRecord } from '@partner/shared/domain/attachments';
import { grpcOptions, ownerOf, type GatewayContext, type GatewayState } from '../../context.js';
import { contentDisposition } from './file-names.js';
import { MULTIPART_OVERHEAD_BYTES, receiveUpload, tooLarge } from './upload.js';
import type { RouteDeps } from '../deps.js';
import { requireOwn } from '../own.js';
import { idempotencyKeyOf, runMutation } from '../../jobs/mutations.js';
import { invalidQuery, pageParams, singleParams } from '../../http/list-query.js';
import { drainAfterEarlyAnswer } from '../../http/early-answer.js';

/** How long the rest of an upload answered early is read (and dropped) before the connection is cut. */

const LIST_PARAMS = new Set(['limit', 'cursor']);

/** The list's query: limit 1..200 and an opaque cursor, each at most once; nothing else. */
export function parseListQuery(querystring: string): { pageSize: number; pageToken: string } {
  const details: ErrorDetail[] = [];
  const page = pageParams(singleParams(querystring, LIST_PARAMS, details), details);
  if (details.length > 0) throw invalidQuery(details);
  return { pageSize: page.pageSize ?? 0, pageToken: page.pageToken ?? '' };
}

/** RFC 9110 If-None-Match (weak comparison): true when the representation's ETag is listed. */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}

export function attachmentRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const config = deps.config.attachments;
  const def = serviceDefs().submission;
  const submissions = deps.clients.submission;
  const callOptions = (ctx: GatewayContext) => grpcOptions(ctx, deps.config.grpcTimeoutMs);
  /** The path's ids, lowercased; malformed ones name nothing (404). */
  const idsOf = (ctx: GatewayContext) => {
    const submissionId = ctx.params.id ?? '';
    if (!isUuid(submissionId)) throw notFound('submission');
    const attachmentId = ctx.params.attachmentId;
    if (attachmentId !== undefined && !isUuid(attachmentId)) throw notFound('attachment');
    return { submissionId: submissionId.toLowerCase(), attachmentId: (attachmentId ?? '').toLowerCase() };
  };
  const getAttachment = async (ctx: GatewayContext, submissionId: string, attachmentId: string) => {
    const { attachment } = await submissions.GetAttachment({ owner: ownerOf(ctx), submissionId, attachmentId }, callOptions(ctx));
    if (!attachment) throw new DomainError('internal', 'internal error');
    return attachment;
  };

  const createAttachment = async (ctx: GatewayContext) => {
    const { submissionId } = idsOf(ctx);
    if (!ctx.is('multipart/form-data')) {
      throw new DomainError('unsupported_media_type', 'send the upload as multipart/form-data with a "file" part');
    }
    const declared = Number(ctx.get('content-length') || NaN);
    if (declared > config.limitBytes + MULTIPART_OVERHEAD_BYTES) throw tooLarge(config.limitBytes);
    // A malformed key is refused before a byte of the upload is read.
    idempotencyKeyOf(ctx);
    const owner = ownerOf(ctx);
    // The submission must be the caller's before a byte is accepted (the service checks again).
    await requireOwn(ctx, deps, 'submission', submissionId);

    const upload = await receiveUpload(ctx.req, {
      client: submissions,
      def,
      owner,
      submissionId,
      limitBytes: config.limitBytes,
      timeoutMs: config.transferTimeoutMs,
    });
    // The request log keeps the file's description, never its bytes (request-log/redact.ts).
    ctx.state.loggedRequestBody = {
      kind: 'multipart',
      file: { fileName: upload.fileName, contentType: upload.contentType, sizeBytes: upload.sizeBytes, sha256: upload.sha256 },
      sizeBytes: Number.isFinite(declared) ? declared : null,
    };
    // The transfer took its own time; queueing (and any Prefer: wait) gets a fresh budget.
    ctx.state.deadline = Math.max(ctx.state.deadline, Date.now() + deps.config.requestTimeoutMs);

    const discard = () =>
      submissions.DiscardUpload({ owner, uploadId: upload.uploadId }, callOptions(ctx)).catch(() => undefined /* the sweep will */);
    let replayed: boolean;
    try {
      ({ replayed } = await runMutation(ctx, deps, {
        kind: JOB_KINDS.attachmentCreate,
        payload: { submissionId, uploadId: upload.uploadId, documentType: upload.documentType },
        ids: { id: submissionId },
        fingerprintOf: {
          sha256: upload.sha256,
          sizeBytes: upload.sizeBytes,
          fileName: upload.fileName,
          contentType: upload.contentType,
          documentType: upload.documentType,
        },
      }));
    } catch (err) {
      // Refused before any job was made: nothing will promote this upload. (After an ambiguous
      // failure, such as the job service timing out, a job may exist; the sweep decides later.)
      if (err instanceof DomainError && (err.code === 'idempotency_key_reused' || err.code === 'validation_error')) await discard();
      throw err;
    }
    // A replay answers with the earlier job, which promotes the earlier upload: this copy goes.
    if (replayed) await discard();
  };

  router.post('/submissions/:id/attachments', deps.guard('submissions/write'), async (ctx) => {
    if (deps.draining?.()) {
      // A transfer that starts now might not fit in the drain budget: the client retries on another pod.
      ctx.set('Retry-After', '1');
      drainAfterEarlyAnswer(ctx);
      throw new DomainError('unavailable', 'This gateway is shutting down; retry the upload.', { retryable: true });
    }
    try {
      await createAttachment(ctx);
    } catch (err) {
      if (!ctx.req.complete) drainAfterEarlyAnswer(ctx);
      throw err;
    }
  });

  router.get('/submissions/:id/attachments', deps.guard('submissions/read'), async (ctx) => {
    const { submissionId } = idsOf(ctx);
    const query = parseListQuery(ctx.querystring);
    const res = await submissions.ListAttachments({ owner: ownerOf(ctx), submissionId, ...query }, callOptions(ctx));
    ctx.body = { items: res.attachments.map(attachmentRecord), nextCursor: res.nextPageToken || null };
  });

  router.get('/submissions/:id/attachments/:attachmentId', deps.guard('submissions/read'), async (ctx) => {
    const { submissionId, attachmentId } = idsOf(ctx);
    ctx.body = attachmentRecord(await getAttachment(ctx, submissionId, attachmentId));
  });

  router.get('/submissions/:id/attachments/:attachmentId/content', deps.guard('submissions/read'), async (ctx) => {
    const { submissionId, attachmentId } = idsOf(ctx);
    const a = await getAttachment(ctx, submissionId, attachmentId);
    const etag = `"${a.sha256}"`;
    ctx.set('ETag', etag);
    if (etagMatches(ctx.get('if-none-match'), etag)) {
      ctx.status = 304;
      return;
    }
    ctx.set('Content-Type', a.contentType);
    ctx.set('Content-Disposition', contentDisposition(a.fileName));
    if (ctx.method === 'HEAD') {
      ctx.status = 200;
      ctx.set('Content-Length', String(Number(a.sizeBytes)));
      return;
    }
    const stream = openServerStream(submissions, def, 'ReadAttachmentContent', { owner: ownerOf(ctx), submissionId, attachmentId }, {
      timeoutMs: config.transferTimeoutMs,
    });
    const chunks = stream[Symbol.asyncIterator]();
    // The first chunk before the status line: a failure here (deleted meanwhile) is still a 404.
    const first = await chunks.next();
    const size = Number(a.sizeBytes);
    async function* body(): AsyncGenerator<Buffer> {
      let sent = 0;
      try {
        for (let next = first; !next.done; next = await chunks.next()) {
          sent += next.value.chunk.length;
          yield next.value.chunk;
          // Done once Content-Length bytes are out: the client may close at once, so end here
          // rather than after the call's closing status.
          if (sent >= size) return;
        }
        // Fewer bytes than announced: fail the response (a reset, not a body that looks whole).
        throw new DomainError('internal', 'the attachment content ended early');
      } finally {
        await chunks.return?.();
      }
    }
    ctx.status = 200;
    ctx.body = Readable.from(body(), { objectMode: false });
    ctx.length = size;
  });

  router.delete('/submissions/:id/attachments/:attachmentId', deps.guard('submissions/write'), async (ctx) => {
    const { submissionId, attachmentId } = idsOf(ctx);
    const key = idempotencyKeyOf(ctx);
    try {
      await getAttachment(ctx, submissionId, attachmentId);
    } catch (err) {
      // Without a key, an attachment that is not there is 404 at once. With one, the key decides:
      // a replay gets its original job (which deleted it); a new key gets a job that fails not_found.
      if (!(err instanceof DomainError && err.code === 'not_found' && key)) throw err;
      await requireOwn(ctx, deps, 'submission', submissionId);
    }
    await runMutation(ctx, deps, {
      kind: JOB_KINDS.attachmentDelete,
      payload: { submissionId, attachmentId },
      ids: { id: submissionId, attachmentId },
      fingerprintOf: { submissionId, attachmentId },
    });
  });
}
