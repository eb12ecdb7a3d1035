// Feed cursors: opaque, tamper-evident, encrypted positions bound to the partner they were issued to.
// Not bound to `types`: a reader may change its filter and keep its place. A garbled or forged
// cursor, or another partner's, is refused.
//
// Version 2 (issued now) holds the partner's own position, the partner_seq of the last event the
// reader has passed (migration 0003), so a cursor never moves because another partner wrote. It is
// sealed with a deterministic authenticated encryption in the SIV construction (Rogaway–Shrimpton;
// RFC 5297 without S2V): iv = HMAC-SHA256(macKey, version | partner | seq) truncated to 128 bits,
// ciphertext = AES-256-CTR(encKey, iv, seq). Opening decrypts, then recomputes iv and compares.
// Nothing in the token is readable (not even the partner's own count), and the same position for
// the same partner always gives the same token, so an empty page can hand back an identical cursor.
//   Layout (25 bytes, 34 characters): version 2 (1) | iv (16) | ciphertext (8).
//
// Version 1 (issued before per-partner positions) holds a global feed position in the clear with an
// HMAC-SHA256 tag (128 bits) over it and the partner. Still accepted; the reader maps the position to
// the partner's own (feed.ts, seqAtPosition) and then issues version 2.
//   Layout (25 bytes, 34 characters): version 1 (1) | position (uint64 BE) | tag (16).
import { createCipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Pool } from '@partner/shared/db/pg';

const LENGTH = 25;
const TOKEN = /^[A-Za-z0-9_-]{34}$/;
const MAX_POSITION = BigInt('9223372036854775807');
const V1_CONTEXT = 'partner.events.v1/feed-cursor';
const V2_MAC_CONTEXT = 'partner.events.v2/feed-cursor/mac';
const V2_ENC_CONTEXT = 'partner.events.v2/feed-cursor/enc';

export interface Owner {
  tenantId: string;
  partnerId: string;
}

/** What a cursor says: the partner's own position (v2), or a global one from before the upgrade (v1). */
export type CursorPosition = { version: 2; seq: bigint } | { version: 1; position: bigint };

const bindingOf = (o: Owner): string => JSON.stringify([o.tenantId, o.partnerId]);

interface Keys {
  v1: Buffer;
  mac: Buffer;
  enc: Buffer;
}

const derive = (secret: string, context: string): Buffer => createHmac('sha256', secret).update(context).digest();

function uint64(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
}

export class FeedCursors {
  private readonly keys: Keys[];

  /** The first secret seals; all of them open (so a secret can be rotated). */
  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new Error('FeedCursors needs at least one secret');
    this.keys = secrets.map((s) => ({ v1: derive(s, V1_CONTEXT), mac: derive(s, V2_MAC_CONTEXT), enc: derive(s, V2_ENC_CONTEXT) }));
  }

  private static iv(k: Keys, owner: Owner, plain: Buffer): Buffer {
    return createHmac('sha256', k.mac).update(Buffer.of(2)).update(plain).update(bindingOf(owner), 'utf8').digest().subarray(0, 16);
  }

  private static ctr(k: Keys, iv: Buffer, data: Buffer): Buffer {
    const c = createCipheriv('aes-256-ctr', k.enc, iv);
    return Buffer.concat([c.update(data), c.final()]);
  }

  /** A version 2 cursor at the partner's own position seq. */
  encode(seq: bigint, owner: Owner): string {
    if (seq < 0n || seq > MAX_POSITION) throw new RangeError(`feed position out of range: ${seq}`);
    const k = this.keys[0]!;
    const plain = uint64(seq);
    const iv = FeedCursors.iv(k, owner, plain);
    return Buffer.concat([Buffer.of(2), iv, FeedCursors.ctr(k, iv, plain)]).toString('base64url');
  }

  /** What the cursor says, or undefined when it is not a cursor this service issued to owner. */
  decode(token: string, owner: Owner): CursorPosition | undefined {
    if (!TOKEN.test(token)) return undefined;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length !== LENGTH || raw.toString('base64url') !== token) return undefined;
    if (raw[0] === 2) {
      const iv = raw.subarray(1, 17);
      for (const k of this.keys) {
        const plain = FeedCursors.ctr(k, iv, raw.subarray(17));
        if (timingSafeEqual(FeedCursors.iv(k, owner, plain), iv)) {
          const seq = plain.readBigUInt64BE();
          return seq <= MAX_POSITION ? { version: 2, seq } : undefined;
        }
      }
      return undefined;
    }
    if (raw[0] === 1) {
      const body = raw.subarray(0, 9);
      const given = raw.subarray(9);
      const tag = (k: Keys) => createHmac('sha256', k.v1).update(body).update(bindingOf(owner), 'utf8').digest().subarray(0, 16);
      if (!this.keys.some((k) => timingSafeEqual(tag(k), given))) return undefined;
      const position = body.readBigUInt64BE(1);
      return position <= MAX_POSITION ? { version: 1, position } : undefined;
    }
    return undefined;
  }
}

/** EVENTS_CURSOR_SECRET when configured, else the key the first start generated into cursor_keys. */
export async function loadFeedCursors(pool: Pool, configured: readonly string[]): Promise<FeedCursors> {
  if (configured.length > 0) return new FeedCursors(configured);
  await pool.query('INSERT INTO cursor_keys (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [randomBytes(32).toString('base64url')]);
  const r = await pool.query<{ secret: string }>('SELECT secret FROM cursor_keys WHERE id = 1');
  return new FeedCursors([r.rows[0]!.secret]);
}
