// Feed cursors: opaque, tamper-evident positions. A cursor is a feed position (the stream sequence
// of the last event the reader has passed) with an HMAC-SHA256 tag (truncated to 128 bits) over it
// AND the partner it was issued to, base64url-encoded. Not bound to `types`: a reader may change its
// filter and keep its place. A garbled or forged cursor, or another partner's, fails the tag check.
//
// Layout (25 bytes, 34 characters): version (1) | position (uint64 BE) | tag (16).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Pool } from '@partner/shared/pg';

const VERSION = 1;
const BODY = 1 + 8;
const TAG = 16;
const TOKEN = /^[A-Za-z0-9_-]{34}$/;
const KEY_CONTEXT = 'partner.events.v1/feed-cursor';

export interface Owner {
  tenantId: string;
  partnerId: string;
}

const bindingOf = (o: Owner): string => JSON.stringify([o.tenantId, o.partnerId]);

export class FeedCursors {
  private readonly keys: Buffer[];

  /** The first secret signs; all of them verify (so a secret can be rotated). */
  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new Error('FeedCursors needs at least one secret');
    this.keys = secrets.map((s) => createHmac('sha256', s).update(KEY_CONTEXT).digest());
  }

  private tag(key: Buffer, body: Buffer, owner: Owner): Buffer {
    return createHmac('sha256', key).update(body).update(bindingOf(owner), 'utf8').digest().subarray(0, TAG);
  }

  encode(position: bigint, owner: Owner): string {
    const body = Buffer.alloc(BODY);
    body.writeUInt8(VERSION, 0);
    body.writeBigUInt64BE(position, 1);
    return Buffer.concat([body, this.tag(this.keys[0]!, body, owner)]).toString('base64url');
  }

  /** The position, or undefined when the token is not a cursor this service issued to owner. */
  decode(token: string, owner: Owner): bigint | undefined {
    if (!TOKEN.test(token)) return undefined;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length !== BODY + TAG || raw.toString('base64url') !== token) return undefined;
    const body = raw.subarray(0, BODY);
    const given = raw.subarray(BODY);
    if (!this.keys.some((k) => timingSafeEqual(this.tag(k, body, owner), given))) return undefined;
    if (body.readUInt8(0) !== VERSION) return undefined;
    const position = body.readBigUInt64BE(1);
    return position <= BigInt('9223372036854775807') ? position : undefined;
  }
}

/** EVENTS_CURSOR_SECRET when configured, else the key the first start generated into cursor_keys. */
export async function loadFeedCursors(pool: Pool, configured: readonly string[]): Promise<FeedCursors> {
  if (configured.length > 0) return new FeedCursors(configured);
  await pool.query('INSERT INTO cursor_keys (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [randomBytes(32).toString('base64url')]);
  const r = await pool.query<{ secret: string }>('SELECT secret FROM cursor_keys WHERE id = 1');
  return new FeedCursors([r.rows[0]!.secret]);
}
