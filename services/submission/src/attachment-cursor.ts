// Page tokens of the attachment listing: the keyset position of a page's last attachment
// (created_at in ms, attachment_id) with a digest over that position and what the token was issued
// for (owner and submission), base64url-encoded. A garbled token, or one from another listing,
// fails the digest and is refused (validation_error). The digest is keyless: it catches accidents,
// not forgeries, and a forgery gains nothing, as a page is always read within the caller's own
// submission.
//
// Layout (37 bytes, 50 characters): version (1) | created_at ms (int64 BE) | attachment_id (16) | digest (12).
import { createHash } from 'node:crypto';

const VERSION = 1;
const BODY = 1 + 8 + 16;
const DIGEST = 12;
const TOKEN = /^[A-Za-z0-9_-]{50}$/;
const CONTEXT = 'partner.submission.v1/attachment-list';

export interface CursorPosition {
  createdAtMs: number;
  attachmentId: string;
}

export interface CursorScope {
  tenantId: string;
  partnerId: string;
  submissionId: string;
}

function digest(body: Buffer, scope: CursorScope): Buffer {
  return createHash('sha256')
    .update(CONTEXT)
    .update(body)
    .update(JSON.stringify([scope.tenantId, scope.partnerId, scope.submissionId.toLowerCase()]))
    .digest()
    .subarray(0, DIGEST);
}

export function encodeCursor(pos: CursorPosition, scope: CursorScope): string {
  const body = Buffer.alloc(BODY);
  body.writeUInt8(VERSION, 0);
  body.writeBigInt64BE(BigInt(pos.createdAtMs), 1);
  Buffer.from(pos.attachmentId.replace(/-/g, ''), 'hex').copy(body, 9);
  return Buffer.concat([body, digest(body, scope)]).toString('base64url');
}

/** The position, or undefined when token is not a cursor issued for this scope. */
export function decodeCursor(token: string, scope: CursorScope): CursorPosition | undefined {
  if (!TOKEN.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  // base64url decoding ignores the spare bits of the last character: insist on the canonical form.
  if (raw.length !== BODY + DIGEST || raw.toString('base64url') !== token) return undefined;
  const body = raw.subarray(0, BODY);
  if (!digest(body, scope).equals(raw.subarray(BODY))) return undefined;
  if (body.readUInt8(0) !== VERSION) return undefined;
  const ms = body.readBigInt64BE(1);
  if (ms < 0n || ms > 253402300799999n) return undefined;
  const hex = body.subarray(9).toString('hex');
  return {
    createdAtMs: Number(ms),
    attachmentId: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
  };
}
