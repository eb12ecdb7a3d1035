// Attachments of submissions over gRPC: streamed uploads into staged uploads, promotion by the
// attachment.create job, reads, streamed content, deletion by the attachment.delete job, and the
// sweep that removes what no job will ever claim.
import { createHash } from 'node:crypto';
import { clientStreaming, serverStreaming, type ClientStreamingHandler, type ServerStreamingHandler } from '@partner/shared/grpc';
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { isJobId, isUuid, newUuid } from '@partner/shared/domain/ids';
import { dbError, type Pool } from '@partner/shared/db/pg';
import type { Logger } from '@partner/shared/telemetry/logger';
import type { ReceiptIssuing } from './receipts/issue.js';
import { receivedAtOf } from './receipts/start.js';
import type { natsNames } from '@partner/shared/nats/client';
import type { OutboxRelay } from '@partner/shared/nats/outbox-relay';
import { isSafeFileName } from '@partner/shared/domain/attachments';
import { contentTypeMismatch, SNIFF_BYTES } from '@partner/shared/domain/content-sniff';
import type { Owner as OwnerMessage } from '@partner/shared/generated/partner/submission/v1/Owner';
import type { UploadAttachmentRequest__Output } from '@partner/shared/generated/partner/submission/v1/UploadAttachmentRequest';
import type { UploadAttachmentResponse } from '@partner/shared/generated/partner/submission/v1/UploadAttachmentResponse';
import type { DiscardUploadRequest__Output } from '@partner/shared/generated/partner/submission/v1/DiscardUploadRequest';
import type { DiscardUploadResponse } from '@partner/shared/generated/partner/submission/v1/DiscardUploadResponse';
import type { CreateAttachmentRequest__Output } from '@partner/shared/generated/partner/submission/v1/CreateAttachmentRequest';
import type { CreateAttachmentResponse } from '@partner/shared/generated/partner/submission/v1/CreateAttachmentResponse';
import type { GetAttachmentRequest__Output } from '@partner/shared/generated/partner/submission/v1/GetAttachmentRequest';
import type { GetAttachmentResponse } from '@partner/shared/generated/partner/submission/v1/GetAttachmentResponse';
import type { ListAttachmentsRequest__Output } from '@partner/shared/generated/partner/submission/v1/ListAttachmentsRequest';
import type { ListAttachmentsResponse } from '@partner/shared/generated/partner/submission/v1/ListAttachmentsResponse';
import type { ReadAttachmentContentRequest__Output } from '@partner/shared/generated/partner/submission/v1/ReadAttachmentContentRequest';
import type { ReadAttachmentContentResponse } from '@partner/shared/generated/partner/submission/v1/ReadAttachmentContentResponse';
import type { DeleteAttachmentRequest__Output } from '@partner/shared/generated/partner/submission/v1/DeleteAttachmentRequest';
import type { DeleteAttachmentResponse } from '@partner/shared/generated/partner/submission/v1/DeleteAttachmentResponse';
import type { BlobStore } from './blob-store.js';
import type { SubmissionMetrics, SweepResult } from './metrics.js';
import type { AttachmentSettings } from './config.js';
import { decodeCursor, encodeCursor } from './attachment-cursor.js';
import * as repo from './attachments-repo.js';
import { DOCUMENT_TYPES, isDocumentType } from '@partner/shared/domain/attachments';


/** Largest chunk of an upload or download message. */
export const MAX_CHUNK_BYTES = 64 * 1024;
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

const invalid = (message: string, field?: string): DomainError =>
  new DomainError('validation_error', message, field ? { details: [{ field, issue: message }] } : {});

function ownerOf(owner: OwnerMessage | null | undefined): repo.Owner {
  if (!owner?.tenantId || !owner.partnerId) throw invalid('owner is required', 'owner');
  return { tenantId: owner.tenantId, partnerId: owner.partnerId };
}

/** A submission id that names nothing (malformed) is answered like an unknown one. */
function submissionIdOf(id: string): string {
  if (!isUuid(id)) throw notFound('submission');
  return id.toLowerCase();
}

export interface AttachmentService {
  UploadAttachment: ClientStreamingHandler<UploadAttachmentRequest__Output, UploadAttachmentResponse>;
  DiscardUpload: (req: DiscardUploadRequest__Output) => Promise<DiscardUploadResponse>;
  CreateAttachment: (req: CreateAttachmentRequest__Output) => Promise<CreateAttachmentResponse>;
  GetAttachment: (req: GetAttachmentRequest__Output) => Promise<GetAttachmentResponse>;
  ListAttachments: (req: ListAttachmentsRequest__Output) => Promise<ListAttachmentsResponse>;
  ReadAttachmentContent: ServerStreamingHandler<ReadAttachmentContentRequest__Output, ReadAttachmentContentResponse>;
  DeleteAttachment: (req: DeleteAttachmentRequest__Output) => Promise<DeleteAttachmentResponse>;
}

export function attachmentService(deps: {
  pool: Pool;
  store: BlobStore;
  settings: AttachmentSettings;
  metrics: Pick<SubmissionMetrics, 'upload'>;
  logger: Logger;
  /** Where attachment events go: the stream names and the relay of the event outbox. */
  names: ReturnType<typeof natsNames>;
  events: OutboxRelay;
  /** Issues each new attachment's receipt (absent: receipts are off, bench only). */
  receipts?: ReceiptIssuing;
}): AttachmentService {
  const { pool, store, settings, logger, metrics } = deps;

  /** Removes an upload that will not become an attachment: bytes first, then the record. */
  const removeUnfinished = async (attachmentId: string) => {
    await store.delete(attachmentId);
    await repo.deleteUnfinished(pool, attachmentId);
  };

  const activeOrNotFound = async (owner: repo.Owner, submissionId: string, attachmentId: string) => {
    const row = isUuid(attachmentId) ? await repo.getActive(pool, owner, submissionId, attachmentId.toLowerCase()).catch(dbError) : undefined;
    if (!row) throw notFound('attachment');
    return row;
  };

  const UploadAttachment = clientStreaming<UploadAttachmentRequest__Output, UploadAttachmentResponse>(async (requests) => {
    const messages = requests[Symbol.asyncIterator]();
    const first = await messages.next();
    const md = first.done ? undefined : first.value.metadata;
    if (!md || first.value?.part !== 'metadata') throw invalid('the first message of an upload must carry its metadata');
    const owner = ownerOf(md.owner);
    const submissionId = submissionIdOf(md.submissionId);
    if (!isSafeFileName(md.fileName)) throw invalid('file_name is not a sanitised file name', 'file_name');
    if (!CONTENT_TYPE.test(md.contentType)) throw invalid('content_type must be a lowercase media type without parameters', 'content_type');
    const declared = Number(md.maxSizeBytes);
    if (!Number.isSafeInteger(declared) || declared < 1) throw invalid('max_size_bytes must be positive', 'max_size_bytes');
    const maxBytes = Math.min(declared, settings.maxBytes);

    const attachmentId = newUuid();
    const begun = await repo
      .beginUpload(pool, { attachmentId, owner, submissionId, fileName: md.fileName, contentType: md.contentType })
      .catch(dbError);
    if (!begun) {
      metrics.upload('not_found');
      throw notFound('submission');
    }

    const hash = createHash('sha256');
    let size = 0;
    let end: { sizeBytes: string; sha256: string } | undefined;
    async function* bytes(): AsyncIterable<Buffer> {
      for (;;) {
        const next = await messages.next();
        if (next.done) return;
        if (end) throw invalid('nothing may follow the end of an upload');
        if (next.value.part === 'end' && next.value.end) {
          end = next.value.end;
          continue;
        }
        const chunk = next.value.chunk;
        if (next.value.part !== 'chunk' || !chunk) throw invalid('every message between the metadata and the end must carry a chunk');
        if (chunk.length > MAX_CHUNK_BYTES) throw invalid(`chunks may be at most ${MAX_CHUNK_BYTES} bytes`);
        size += chunk.length;
        if (size > maxBytes) throw new DomainError('payload_too_large', `the file may be at most ${maxBytes} bytes`);
        hash.update(chunk);
        yield chunk;
      }
    }
    try {
      await store.put(attachmentId, bytes());
      // The stream stopped without its end: the sender gave up (a cancel may look like this).
      if (!end) throw new DomainError('unavailable', 'the upload ended before it was complete');
      if (size === 0) throw invalid('the file is empty', 'file');
      const sha256 = hash.digest('hex');
      if (Number(end.sizeBytes) !== size || end.sha256 !== sha256) {
        throw new DomainError('unavailable', 'the upload arrived damaged (size or sha256 differ); upload it again');
      }
      if (!(await repo.markStaged(pool, attachmentId, size, sha256))) {
        throw new DomainError('unavailable', 'the upload was interrupted; upload the file again');
      }
      metrics.upload('staged', size);
      return { uploadId: attachmentId, sizeBytes: size, sha256 };
    } catch (err) {
      const code = err instanceof DomainError ? err.code : (err as { code?: string }).code;
      const outcome = { payload_too_large: 'too_large', validation_error: 'invalid', ERR_STREAM_PREMATURE_CLOSE: 'aborted' }[code ?? ''];
      metrics.upload(outcome ?? 'failed');
      // Nothing of a failed or cancelled upload stays; if this cleanup fails too, the sweep finishes it.
      await removeUnfinished(attachmentId).catch((cleanupErr: unknown) =>
        logger.warn({ err: cleanupErr, attachmentId }, 'could not remove a failed upload; the sweep will'),
      );
      if (err instanceof DomainError) throw err;
      return dbError(err);
    }
  });

  const DiscardUpload = async (req: DiscardUploadRequest__Output): Promise<DiscardUploadResponse> => {
    const owner = ownerOf(req.owner);
    if (!isUuid(req.uploadId)) return { discarded: false };
    const id = req.uploadId.toLowerCase();
    if (!(await repo.claimStaged(pool, owner, id).catch(dbError))) return { discarded: false };
    await removeUnfinished(id).catch(dbError);
    return { discarded: true };
  };

  /**
   * A staged upload whose leading bytes do not fit its declared media type (content-sniff.ts) fails
   * the job that would attach it: validation_error naming contentType. The upload stays staged (the
   * sweep removes it), so a redelivery of the job answers the same.
   */
  const checkContentType = async (owner: repo.Owner, submissionId: string, uploadId: string): Promise<void> => {
    const declared = await repo.stagedContentType(pool, owner, submissionId, uploadId).catch(dbError);
    if (declared === undefined) return;
    const parts: Buffer[] = [];
    let got = 0;
    for await (const chunk of store.get(uploadId)) {
      parts.push(chunk);
      got += chunk.length;
      if (got >= SNIFF_BYTES) break;
    }
    const why = contentTypeMismatch(declared, Buffer.concat(parts).subarray(0, SNIFF_BYTES));
    if (why) {
      throw new DomainError('validation_error', `contentType ${why}; upload it again with the type it is`, {
        retryable: false,
        details: [{ field: 'contentType', issue: why }],
      });
    }
  };

  const CreateAttachment = async (req: CreateAttachmentRequest__Output): Promise<CreateAttachmentResponse> => {
    if (!isJobId(req.jobId)) throw invalid('job_id is required', 'job_id');
    const owner = ownerOf(req.owner);
    const submissionId = submissionIdOf(req.submissionId);
    if (!isDocumentType(req.documentType)) {
      throw invalid(`document_type must be one of ${DOCUMENT_TYPES.join(', ')}`, 'document_type');
    }
    if (isUuid(req.uploadId)) await checkContentType(owner, submissionId, req.uploadId.toLowerCase());
    const promoted = isUuid(req.uploadId)
      ? await repo
          .promote(pool, deps.names, {
            jobId: req.jobId,
            owner,
            principalId: req.principalId || null,
            submissionId,
            uploadId: req.uploadId.toLowerCase(),
            documentType: req.documentType,
            receivedAt: receivedAtOf(req.receivedAt),
          }, deps.receipts)
          .catch(dbError)
      : undefined;
    if (promoted?.event) deps.events.publishNow(promoted.event.outboxId, promoted.event);
    if (promoted?.requirementsEvent) deps.events.publishNow(promoted.requirementsEvent.outboxId, promoted.requirementsEvent);
    const row = promoted?.row;
    if (!row) {
      throw new DomainError('upload_expired', 'the uploaded file is no longer available (it was not attached in time); upload it again', {
        retryable: false,
      });
    }
    return { attachment: repo.toProto(row), receipt: promoted.receipt };
  };

  const GetAttachment = async (req: GetAttachmentRequest__Output): Promise<GetAttachmentResponse> => {
    const row = await activeOrNotFound(ownerOf(req.owner), submissionIdOf(req.submissionId), req.attachmentId);
    return { attachment: repo.toProto(row) };
  };

  const ListAttachments = async (req: ListAttachmentsRequest__Output): Promise<ListAttachmentsResponse> => {
    const owner = ownerOf(req.owner);
    const submissionId = submissionIdOf(req.submissionId);
    const pageSize = req.pageSize === 0 ? DEFAULT_PAGE_SIZE : req.pageSize;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw invalid(`must be an integer from 1 to ${MAX_PAGE_SIZE}`, 'limit');
    }
    const scope = { ...owner, submissionId };
    let after: ReturnType<typeof decodeCursor>;
    if (req.pageToken) {
      after = decodeCursor(req.pageToken, scope);
      if (!after) throw invalid('is not a cursor of this listing: pass nextCursor unchanged', 'cursor');
    }
    if (!(await repo.submissionExists(pool, owner, submissionId).catch(dbError))) throw notFound('submission');
    const rows = await repo.listActive(pool, owner, submissionId, pageSize, after).catch(dbError);
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    return {
      attachments: page.map(repo.toProto),
      nextPageToken:
        rows.length > pageSize && last?.created_at ? encodeCursor({ createdAtMs: last.created_at.getTime(), attachmentId: last.attachment_id }, scope) : '',
    };
  };

  const ReadAttachmentContent = serverStreaming<ReadAttachmentContentRequest__Output, ReadAttachmentContentResponse>(async function* (req) {
    const row = await activeOrNotFound(ownerOf(req.owner), submissionIdOf(req.submissionId), req.attachmentId);
    let sent = 0;
    try {
      for await (const piece of store.get(row.attachment_id)) {
        for (let offset = 0; offset < piece.length; offset += MAX_CHUNK_BYTES) {
          const chunk = piece.subarray(offset, offset + MAX_CHUNK_BYTES);
          sent += chunk.length;
          yield { chunk };
        }
      }
    } catch (err) {
      return dbError(err);
    }
    // Deleted while being read: the bytes ran out early. Say so rather than end as if complete.
    if (String(sent) !== row.size_bytes) throw notFound('attachment');
  });

  const DeleteAttachment = async (req: DeleteAttachmentRequest__Output): Promise<DeleteAttachmentResponse> => {
    if (!isJobId(req.jobId)) throw invalid('job_id is required', 'job_id');
    const owner = ownerOf(req.owner);
    const submissionId = submissionIdOf(req.submissionId);
    if (!isUuid(req.attachmentId)) throw notFound('attachment');
    const attachmentId = req.attachmentId.toLowerCase();
    const { outcome, event, requirementsEvent } = await repo.markDeleted(pool, deps.names, { jobId: req.jobId, owner, submissionId, attachmentId }).catch(dbError);
    if (event) deps.events.publishNow(event.outboxId, event);
    if (requirementsEvent) deps.events.publishNow(requirementsEvent.outboxId, requirementsEvent);
    if (outcome === 'missing') throw notFound('attachment');
    // The record is gone from the API already; the bytes follow (the sweep retries if this fails).
    await store.delete(attachmentId).catch(dbError);
    await repo.markPurged(pool, attachmentId).catch(dbError);
    return { attachmentId };
  };

  return { UploadAttachment, DiscardUpload, CreateAttachment, GetAttachment, ListAttachments, ReadAttachmentContent, DeleteAttachment };
}

/**
 * One pass of the sweep: removes abandoned uploads (receiving or staged for too long) with their
 * bytes, finishes deletions whose bytes were left behind, and drops old records of deleted
 * attachments. Safe to run in several replicas at once (claims skip rows others hold).
 */
export async function sweepAttachments(
  pool: Pool,
  store: BlobStore,
  settings: Pick<AttachmentSettings, 'receivingTtlMs' | 'stagedTtlMs' | 'deletedRetentionMs'>,
  batch = 100,
): Promise<SweepResult> {
  const out: SweepResult = { abandonedRemoved: 0, deletedPurged: 0, deletedDropped: 0 };
  for (;;) {
    const claimed = await repo.claimAbandoned(pool, { receivingTtlMs: settings.receivingTtlMs, stagedTtlMs: settings.stagedTtlMs, limit: batch });
    for (const id of claimed) {
      await store.delete(id);
      await repo.deleteUnfinished(pool, id);
    }
    out.abandonedRemoved += claimed.length;
    if (claimed.length < batch) break;
  }
  // A deletion normally purges its bytes at once; give one in progress a minute before finishing it.
  for (;;) {
    const ids = await repo.unpurgedDeleted(pool, { olderThanMs: 60_000, limit: batch });
    for (const id of ids) {
      await store.delete(id);
      await repo.markPurged(pool, id);
    }
    out.deletedPurged += ids.length;
    if (ids.length < batch) break;
  }
  for (;;) {
    const n = await repo.dropDeleted(pool, { retentionMs: settings.deletedRetentionMs, limit: batch });
    out.deletedDropped += n;
    if (n < batch) break;
  }
  return out;
}
