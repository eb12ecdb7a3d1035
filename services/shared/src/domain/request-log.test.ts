import { describe, expect, it } from 'vitest';
import { isRequestLogId, newRequestLogId, requestLogIdTime } from './request-log.js';

describe('request-log entry ids', () => {
  it('carry their createdAt and are distinct across the random pool\'s refills (5,000 ids, 20 refills)', () => {
    const at = Date.parse('2026-11-28T17:45:12.345Z');
    const ids = Array.from({ length: 5_000 }, (_, i) => newRequestLogId(at + (i % 3)));
    for (const [i, id] of ids.entries()) {
      expect(isRequestLogId(id), id).toBe(true);
      expect(requestLogIdTime(id)).toBe(at + (i % 3));
      // UUIDv7: version 7, RFC 4122 variant.
      expect(id[16]).toBe('7');
      expect('89ab').toContain(id[20]);
    }
    expect(new Set(ids).size).toBe(ids.length);
    // The random part (all but the 48-bit time, version and variant) differs between any two ids, not
    // only the whole: a pool handing out the same bytes twice would repeat it.
    expect(new Set(ids.map((id) => id.slice(17))).size).toBe(ids.length);
  });
});
