// File names of attachments: what a partner sends is reduced to a safe display name (no path, no
// control or invisible characters, no quotes or characters Windows refuses, at most 255 UTF-8
// bytes with the extension kept), and served back in a Content-Disposition header that cannot
// be broken out of (an ASCII fallback plus the RFC 5987/6266 filename* form).

import { MAX_FILE_NAME_BYTES } from '@partner/shared/domain/attachments';

export const FALLBACK_FILE_NAME = 'attachment';

const REMOVED = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
const REPLACED = /["*:<>?|]/g;
const EXTENSION = /\.[\p{L}\p{N}]{1,16}$/u;

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Cuts s to at most max UTF-8 bytes, at a code point boundary. */
function cutUtf8(s: string, max: number): string {
  let out = '';
  for (const ch of s) {
    if (bytes(out) + bytes(ch) > max) break;
    out += ch;
  }
  return out;
}

/** Without its trailing spaces and dots: a loop, since /[\s.]+$/ tries every start of a long run of them (quadratic). */
function withoutTrailingDots(s: string): string {
  let end = s.length;
  while (end > 0 && (s[end - 1] === ' ' || s[end - 1] === '.')) end--;
  return s.slice(0, end);
}

const tidy = (s: string): string =>
  withoutTrailingDots(
    s
      .normalize('NFC')
      .replace(/\s+/gu, ' ')
      .replace(/^[\s.]+/u, ''),
  );

/**
 * The name an attachment is stored and served under. Takes the last path segment, drops control
 * and invisible characters (CR, LF, NUL, bidi overrides), replaces quotes and `* : < > ? |` with
 * `_`, collapses white space, strips leading dots and trailing dots/spaces, and keeps the extension
 * when cutting to 255 bytes. An empty result becomes "attachment".
 */
export function sanitiseFileName(raw: string): string {
  const noControls = raw.normalize('NFC').replace(REMOVED, '');
  const base = noControls.split(/[/\\]/).pop() ?? '';
  let name = tidy(base.replace(REPLACED, '_'));
  if (bytes(name) > MAX_FILE_NAME_BYTES) {
    const ext = EXTENSION.exec(name)?.[0] ?? '';
    name = tidy(cutUtf8(name.slice(0, name.length - ext.length), MAX_FILE_NAME_BYTES - bytes(ext)) + ext);
  }
  return name || FALLBACK_FILE_NAME;
}

/** RFC 5987 ext-value encoding: everything but attr-char percent-encoded. */
function encodeRfc5987(s: string): string {
  return encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded>` for a sanitised
 * name. The fallback drops accents and replaces anything else outside printable ASCII (and `"`,
 * `\`, `%`) with `_`, for clients that do not read filename*.
 */
export function contentDisposition(fileName: string): string {
  const ascii = fileName
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc5987(fileName)}`;
}
