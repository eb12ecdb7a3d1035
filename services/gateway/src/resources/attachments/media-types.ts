// What may be attached: the documented allowlist of media types (415 unsupported_media_type for
// anything else) and the kinds of insurance document (documentType).

/** Allowed media types and the file extensions they go with. */
export const ALLOWED_MEDIA_TYPES: Readonly<Record<string, readonly string[]>> = {
  'application/pdf': ['.pdf'],
  'image/png': ['.png'],
  'image/jpeg': ['.jpg', '.jpeg'],
  'image/tiff': ['.tif', '.tiff'],
  'text/plain': ['.txt'],
  'text/csv': ['.csv'],
  'application/json': ['.json'],
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': ['.xlsx'],
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': ['.docx'],
  'application/vnd.ms-excel': ['.xls'],
};

/** Other spellings clients send for allowed types. */
const ALIASES: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'application/x-pdf': 'application/pdf',
};

/** What clients send when they do not know the type (curl for .xlsx, for instance). */
const UNKNOWN = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

const BY_EXTENSION = new Map(Object.entries(ALLOWED_MEDIA_TYPES).flatMap(([type, exts]) => exts.map((e) => [e, type] as const)));

/**
 * The media type an upload is stored with: the part's declared type (parameters dropped) when it
 * is allowed; for an unknown type (application/octet-stream), the type of the file's extension;
 * undefined when neither is allowed.
 */
export function resolveMediaType(declared: string | undefined, fileName: string): string | undefined {
  const essence = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  const type = ALIASES[essence] ?? essence;
  if (Object.hasOwn(ALLOWED_MEDIA_TYPES, type)) return type;
  if (!UNKNOWN.has(type)) return undefined;
  const ext = /\.[^.]+$/.exec(fileName)?.[0]?.toLowerCase();
  return ext ? BY_EXTENSION.get(ext) : undefined;
}

export { DEFAULT_DOCUMENT_TYPE, DOCUMENT_TYPES, isDocumentType, type DocumentType } from '@partner/shared/domain/attachments';
