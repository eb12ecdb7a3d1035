import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FeedCursors } from './cursor.js';

const a = { tenantId: 't1', partnerId: 'p1' };
const b = { tenantId: 't1', partnerId: 'p2' };
const SECRET = 's'.repeat(32);

/** A version 1 cursor as the service issued them before per-partner positions (written out independently). */
function v1Cursor(secret: string, position: bigint, owner: { tenantId: string; partnerId: string }): string {
  const key = createHmac('sha256', secret).update('partner.events.v1/feed-cursor').digest();
  const body = Buffer.alloc(9);
  body.writeUInt8(1, 0);
  body.writeBigUInt64BE(position, 1);
  const tag = createHmac('sha256', key).update(body).update(JSON.stringify([owner.tenantId, owner.partnerId]), 'utf8').digest().subarray(0, 16);
  return Buffer.concat([body, tag]).toString('base64url');
}

describe('feed cursors', () => {
  const cursors = new FeedCursors([SECRET]);

  it('round-trips a partner position for its partner only, the same token every time', () => {
    for (const p of [0n, 1n, 42n, 9_007_199_254_740_993n, 9_223_372_036_854_775_807n]) {
      const c = cursors.encode(p, a);
      expect(c).toMatch(/^[A-Za-z0-9_-]{34}$/);
      expect(cursors.decode(c, a)).toEqual({ version: 2, seq: p });
      expect(cursors.decode(c, b)).toBeUndefined();
      expect(cursors.encode(p, a)).toBe(c);
    }
    expect(() => cursors.encode(-1n, a)).toThrow(RangeError);
  });

  it('reveals nothing of the position: no plaintext bytes, and neighbouring positions look unrelated', () => {
    const tokens = Array.from({ length: 256 }, (_, i) => Buffer.from(cursors.encode(BigInt(i), a), 'base64url'));
    for (const [i, raw] of tokens.entries()) {
      expect(raw[0]).toBe(2);
      const plain = Buffer.alloc(8);
      plain.writeBigUInt64BE(BigInt(i));
      expect(raw.subarray(1).includes(plain)).toBe(false);
    }
    // Positions 1 and 2, and the same position for two partners, differ in about half their bits.
    const bitsApart = (x: Buffer, y: Buffer) => [...x].reduce((n, byte, i) => n + [...(byte ^ y[i]!).toString(2)].filter((d) => d === '1').length, 0);
    const distances = [
      bitsApart(tokens[1]!.subarray(1), tokens[2]!.subarray(1)),
      bitsApart(Buffer.from(cursors.encode(5n, a), 'base64url').subarray(1), Buffer.from(cursors.encode(5n, b), 'base64url').subarray(1)),
    ];
    for (const d of distances) expect(d).toBeGreaterThan(48);
    expect(new Set(tokens.map((t) => t.toString('hex'))).size).toBe(256);
  });

  it('refuses tampered, truncated, non-canonical, unknown-version and foreign-key cursors', () => {
    const c = cursors.encode(7n, a);
    const raw = Buffer.from(c, 'base64url');
    for (let i = 0; i < raw.length; i++) {
      const t = Buffer.from(raw);
      t[i]! ^= 0x01;
      expect(cursors.decode(t.toString('base64url'), a), `byte ${i}`).toBeUndefined();
    }
    expect(cursors.decode(c.slice(1), a)).toBeUndefined();
    expect(cursors.decode(`${c.slice(0, -1)}${c.at(-1) === 'A' ? 'B' : 'A'}`, a)).toBeUndefined();
    expect(cursors.decode('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', a)).toBeUndefined();
    expect(new FeedCursors(['k'.repeat(32)]).decode(c, a)).toBeUndefined();
    // A rotated key still opens while it is listed.
    expect(new FeedCursors(['k'.repeat(32), SECRET]).decode(c, a)).toEqual({ version: 2, seq: 7n });
  });

  it('still reads version 1 cursors (global positions, issued before the upgrade) for their partner only', () => {
    const old = v1Cursor(SECRET, 1234n, a);
    expect(cursors.decode(old, a)).toEqual({ version: 1, position: 1234n });
    expect(cursors.decode(old, b)).toBeUndefined();
    expect(new FeedCursors(['k'.repeat(32), SECRET]).decode(old, a)).toEqual({ version: 1, position: 1234n });
    expect(new FeedCursors(['k'.repeat(32)]).decode(old, a)).toBeUndefined();
    const t = Buffer.from(old, 'base64url');
    t[8]! ^= 0x01;
    expect(cursors.decode(t.toString('base64url'), a)).toBeUndefined();
  });
});
