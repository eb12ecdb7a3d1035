import { describe, expect, it } from 'vitest';
import { parseTimestamp } from './time.js';

describe('parseTimestamp', () => {
  it('reads RFC 3339 with a zone, rounding up to the millisecond', () => {
    expect(parseTimestamp('2025-01-31T00:00:00Z')).toBe(Date.parse('2025-01-31T00:00:00Z'));
    expect(parseTimestamp('2025-01-31T01:00:00+01:00')).toBe(Date.parse('2025-01-31T00:00:00Z'));
    expect(parseTimestamp('2025-01-31T00:00:00.0001Z')).toBe(Date.parse('2025-01-31T00:00:00.001Z'));
  });

  it('refuses text that is not one, impossible dates and missing zones', () => {
    for (const s of ['', 'yesterday', '2025-01-31', '2025-01-31T00:00:00', '2025-02-30T00:00:00Z', '2025-01-31T24:00:00Z', '2025-01-31T00:00:00+24:00']) {
      expect(parseTimestamp(s), s).toBeUndefined();
    }
  });

  it('refuses instants outside years 0001..9999 UTC', () => {
    expect(parseTimestamp('0000-01-01T00:00:00Z')).toBeUndefined();
    expect(parseTimestamp('0001-01-01T00:00:00+00:01')).toBeUndefined();
    expect(parseTimestamp('9999-12-31T23:59:59-00:01')).toBeUndefined();
    expect(new Date(parseTimestamp('0001-01-01T00:00:00Z')!).toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(new Date(parseTimestamp('9999-12-31T23:59:59.999Z')!).toISOString()).toBe('9999-12-31T23:59:59.999Z');
  });
});
