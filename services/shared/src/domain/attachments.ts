// Attachments as the API shows them, shared by the gateway, the submission service and the worker:
// the kinds of document, the rule for stored file names, and the record mapped from the submission
// service's message.
import type { Attachment__Output } from '../generated/partner/submission/v1/Attachment.js';

/** Kinds of insurance document an attachment may be (API `documentType`). */
export const DOCUMENT_TYPES = ['application', 'loss_run', 'schedule_of_values', 'financials', 'other'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];
export const DEFAULT_DOCUMENT_TYPE: DocumentType = 'other';
export const isDocumentType = (s: string): s is DocumentType => (DOCUMENT_TYPES as readonly string[]).includes(s);

/** Longest stored file name, in UTF-8 bytes (the gateway's sanitiser cuts to it). */
export const MAX_FILE_NAME_BYTES = 255;

// Characters a stored file name never contains: controls, invisible format characters (bidi
// overrides), line/paragraph separators, path separators, quotes and the other characters
// Windows refuses in file names.
const UNSAFE_NAME_CHARS = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}"\\/*:<>?|]/u;

/**
 * True for a name the gateway's sanitiser (gateway/src/resources/attachments/file-names.ts) could have produced:
 * the submission service stores nothing else.
 */
export function isSafeFileName(name: string): boolean {
  return (
    name.length > 0 &&
    Buffer.byteLength(name, 'utf8') <= MAX_FILE_NAME_BYTES &&
    name === name.normalize('NFC') &&
    name === name.trim() &&
    !name.startsWith('.') &&
    !UNSAFE_NAME_CHARS.test(name) &&
    !/\s{2}/u.test(name)
  );
}

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
