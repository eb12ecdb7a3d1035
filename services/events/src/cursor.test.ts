import { describe, expect, it } from 'vitest';
import { FeedCursors } from './cursor.js';

const a = { tenantId: 't1', partnerId: 'p1' };
const b = { tenantId: 't1', partnerId: 'p2' };

describe('feed cursors', () => {
  const cursors = new FeedCursors(['s'.repeat(32)]);

  it('round-trips a position for its partner only', () => {
    for (const p of [0n, 1n, 42n, 9_007_199_254_740_993n]) {
      const c = cursors.encode(p, a);
      expect(c).toMatch(/^[A-Za-z0-9_-]{34}$/);
      expect(cursors.decode(c, a)).toBe(p);
      expect(cursors.decode(c, b)).toBeUndefined();
    }
  });

  it('refuses tampered, truncated, non-canonical and foreign-key cursors', () => {
    const c = cursors.encode(7n, a);
    const flipped = `${c.slice(0, 5)}${c[5] === 'A' ? 'B' : 'A'}${c.slice(6)}`;
    expect(cursors.decode(flipped, a)).toBeUndefined();
    expect(cursors.decode(c.slice(1), a)).toBeUndefined();
    expect(cursors.decode(`${c.slice(0, -1)}${c.at(-1) === 'A' ? 'B' : 'A'}`, a)).toBeUndefined();
    expect(new FeedCursors(['k'.repeat(32)]).decode(c, a)).toBeUndefined();
    // A rotated key still verifies while it is listed.
    expect(new FeedCursors(['k'.repeat(32), 's'.repeat(32)]).decode(c, a)).toBe(7n);
  });
});
