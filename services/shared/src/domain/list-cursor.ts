// List cursors: opaque, tamper-evident page tokens shared by the keyset-paginated lists (policies,
// jobs, submissions). A cursor is the keyset position of the last item of a page (created_at in ms,
// the item's 128-bit id) with an HMAC-SHA256 tag (truncated to 128 bits) over that position AND the
// request it belongs to (owner and filters), all base64url-encoded. A garbled or forged cursor, or
// one used by another partner, with other filters or for another list, fails the tag check: the
// caller gets 400, never a 500 and never another page than its own.
//
// Layout (41 bytes, 55 characters): version (1) | created_at ms (int64 BE) | id (16) | tag (16).
// The key a service keeps in its schema when none is configured: db/cursor-keys.ts.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const VERSION = 1;
const BODY = 1 + 8 + 16;
const TAG = 16;
const TOKEN = /^[A-Za-z0-9_-]{55}$/;

export interface CursorPosition {
  /** created_at of the last item of the page, epoch milliseconds. */
  createdAtMs: number;
  /** The last item's id. */
  id: string;
}

/** How a list's ids map to the 16 bytes a cursor carries. */
export interface IdFormat {
  toHex(id: string): string;
  fromHex(hex: string): string;
}

/** UUIDs (policies, submissions). */
export const UUID_IDS: IdFormat = {
  toHex: (id) => id.replace(/-/g, ''),
  fromHex: (h) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`,
};

/** Job handles, job_<32 hex>. */
export const JOB_IDS: IdFormat = {
  toHex: (id) => id.slice('job_'.length),
  fromHex: (h) => `job_${h}`,
};

/** Prefixed hex ids: `<prefix>_<32 hex>` (webhook endpoints we_, deliveries whd_). */
export const prefixedIds = (prefix: string): IdFormat => ({
  toHex: (id) => id.slice(prefix.length + 1),
  fromHex: (h) => `${prefix}_${h}`,
});

/** Whether token has the shape of a cursor (anyone can check; only the issuing service can verify it). */
export const isCursorShaped = (token: string): boolean => TOKEN.test(token);

/** A new random secret (for the cursor_keys row): 256 bits, base64url. */
export const newCursorSecret = (): string => randomBytes(32).toString('base64url');

export class CursorCodec {
  private readonly keys: Buffer[];

  /**
   * The first secret signs; all of them verify (so a secret can be rotated without a 400 burst).
   * context names the list (e.g. 'partner.policy.v1/list-cursor'): a cursor of one list is never
   * valid for another, even under the same secret.
   */
  constructor(
    secrets: readonly string[],
    context: string,
    private readonly ids: IdFormat = UUID_IDS,
  ) {
    if (secrets.length === 0) throw new Error('CursorCodec needs at least one secret');
    this.keys = secrets.map((s) => createHmac('sha256', s).update(context).digest());
  }

  private tag(key: Buffer, body: Buffer, binding: string): Buffer {
    return createHmac('sha256', key).update(body).update(binding, 'utf8').digest().subarray(0, TAG);
  }

  /** binding: what the cursor is valid for (owner and filters), see bindingOf(). */
  encode(pos: CursorPosition, binding: string): string {
    const body = Buffer.alloc(BODY);
    body.writeUInt8(VERSION, 0);
    body.writeBigInt64BE(BigInt(pos.createdAtMs), 1);
    Buffer.from(this.ids.toHex(pos.id), 'hex').copy(body, 9);
    return Buffer.concat([body, this.tag(this.keys[0]!, body, binding)]).toString('base64url');
  }

  /** The position, or undefined when the token is not a cursor this service issued for binding. */
  decode(token: string, binding: string): CursorPosition | undefined {
    if (!TOKEN.test(token)) return undefined;
    const raw = Buffer.from(token, 'base64url');
    // base64url decoding ignores the spare bits of the last character: insist on the canonical form.
    if (raw.length !== BODY + TAG || raw.toString('base64url') !== token) return undefined;
    const body = raw.subarray(0, BODY);
    const given = raw.subarray(BODY);
    if (!this.keys.some((k) => timingSafeEqual(this.tag(k, body, binding), given))) return undefined;
    if (body.readUInt8(0) !== VERSION) return undefined;
    const ms = body.readBigInt64BE(1);
    if (ms < 0n || ms > 253402300799999n) return undefined;
    return { createdAtMs: Number(ms), id: this.ids.fromHex(body.subarray(9).toString('hex')) };
  }
}

/** What a cursor is bound to: the owner and every filter, so it is only valid for the same query. */
export function bindingOf(owner: { tenantId: string; partnerId: string }, filters: readonly (string | undefined)[]): string {
  return JSON.stringify([owner.tenantId, owner.partnerId, ...filters.map((f) => f ?? null)]);
}
