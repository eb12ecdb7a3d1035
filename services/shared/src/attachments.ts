// The API's attachment record, from the submission service's message: one mapping for the gateway
// (GET .../attachments/{id}, the list) and the worker (the result of attachment.create).
import type { Attachment__Output } from './generated/partner/submission/v1/Attachment.js';

export interface AttachmentRecord {
  attachmentId: string;
  submissionId: string;
  fileName: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  documentType: string;
  createdAt: string;
}

export function attachmentRecord(a: Attachment__Output): AttachmentRecord {
  return {
    attachmentId: a.attachmentId,
    submissionId: a.submissionId,
    fileName: a.fileName,
    contentType: a.contentType,
    sizeBytes: Number(a.sizeBytes),
    sha256: a.sha256,
    documentType: a.documentType,
    createdAt: a.createdAt,
  };
}
