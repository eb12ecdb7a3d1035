// Job handlers for attachment mutations. attachment.create promotes the upload the gateway staged
// (the bytes never travel through NATS, only the upload's id) and returns the attachment record;
// attachment.delete deletes one. Both are idempotent by job id in the submission service. A
// non-retryable refusal (the upload expired, the attachment is gone) settles the job as failed;
// anything retryable propagates, so the job is delivered again.
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { attachmentRecord } from '@partner/shared/domain/attachments';
import { failOnRefusal, jobScope, type Handler } from './handler-contract.js';

/** Payload of attachment.create, as the gateway queues it. */
export interface AttachmentCreatePayload {
  submissionId: string;
  uploadId: string;
  documentType: string;
}

/** Payload of attachment.delete. */
export interface AttachmentDeletePayload {
  submissionId: string;
  attachmentId: string;
}

const createAttachment: Handler = async (job, payload, ctx) => {
  const p = payload as AttachmentCreatePayload;
  const { attachment, receipt } = await ctx.clients.submission
    .CreateAttachment({
      ...jobScope(job),
      principalId: job.caller.principalId,
      submissionId: p.submissionId,
      uploadId: p.uploadId,
      documentType: p.documentType,
      receivedAt: job.createdAt,
    })
    .catch(failOnRefusal);
  return { ...attachmentRecord(attachment!), ...(receipt ? { receipt } : {}) };
};

const deleteAttachment: Handler = async (job, payload, ctx) => {
  const p = payload as AttachmentDeletePayload;
  const { attachmentId } = await ctx.clients.submission
    .DeleteAttachment({
      ...jobScope(job),
      submissionId: p.submissionId,
      attachmentId: p.attachmentId,
    })
    .catch(failOnRefusal);
  return { attachmentId, deleted: true };
};

export const attachmentHandlers: Record<string, Handler> = {
  [JOB_KINDS.attachmentCreate]: createAttachment,
  [JOB_KINDS.attachmentDelete]: deleteAttachment,
};
