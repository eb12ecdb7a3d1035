// Attachments as the API shows them, shared by the gateway, the submission service and the worker:
// the kinds of document, and the record mapped from the submission service's message.
import type { Attachment__Output } from './generated/partner/submission/v1/Attachment.js';

/** Kinds of insurance document an attachment may be (API `documentType`). */
export const DOCUMENT_TYPES = ['application', 'loss_run', 'schedule_of_values', 'financials', 'other'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];
export const DEFAULT_DOCUMENT_TYPE: DocumentType = 'other';
export const isDocumentType = (s: string): s is DocumentType => (DOCUMENT_TYPES as readonly string[]).includes(s);

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
