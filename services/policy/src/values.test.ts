import { describe, expect, it } from 'vitest';
import { AMOUNT, isCalendarDate, parseTimestamp, policyNumberIssue } from './values.js';

describe('policy field formats', () => {
  it('calendar dates are real dates', () => {
    for (const ok of ['2025-01-31', '2024-02-29', '2000-02-29', '9999-12-31']) expect(isCalendarDate(ok), ok).toBe(true);
    for (const bad of ['2025-02-29', '1900-02-29', '2025-13-01', '2025-00-10', '2025-1-01', '20250101', '2025-01-32', '0000-01-01', '']) {
      expect(isCalendarDate(bad), bad).toBe(false);
    }
  });

  it('amounts are non-negative decimal strings', () => {
    for (const ok of ['0', '0.5', '1234.50', '1234.5678', '999999999999999.99']) expect(AMOUNT.test(ok), ok).toBe(true);
    for (const bad of ['-1', '01', '1.', '.5', '1.23456', '1e3', '1,000.00', ' 1', '1234567890123456', '']) expect(AMOUNT.test(bad), bad).toBe(false);
  });

  it('policy numbers: 1-64 printable characters, no surrounding spaces', () => {
    for (const ok of ['P-1', 'HO 123 456', "' OR '1'='1", 'ü'.repeat(64), 'x']) expect(policyNumberIssue(ok), ok).toBeUndefined();
    for (const bad of ['', ' P-1', 'P-1 ', 'a\nb', 'a\u0000b', 'a\u200bb', 'x'.repeat(65)]) expect(policyNumberIssue(bad), JSON.stringify(bad)).toBeDefined();
  });

  it('timestamps: RFC 3339 with a zone, rounded up to the millisecond', () => {
    expect(parseTimestamp('2025-01-31T10:00:00Z')).toBe(Date.parse('2025-01-31T10:00:00.000Z'));
    expect(parseTimestamp('2025-01-31T10:00:00.123Z')).toBe(Date.parse('2025-01-31T10:00:00.123Z'));
    expect(parseTimestamp('2025-01-31T10:00:00.1231Z')).toBe(Date.parse('2025-01-31T10:00:00.124Z'));
    expect(parseTimestamp('2025-01-31T10:00:00.123000Z')).toBe(Date.parse('2025-01-31T10:00:00.123Z'));
    expect(parseTimestamp('2025-01-31T12:00:00+02:00')).toBe(Date.parse('2025-01-31T10:00:00Z'));
    expect(parseTimestamp('2025-01-31t10:00:00-01:30')).toBe(Date.parse('2025-01-31T11:30:00Z'));
    for (const bad of ['2025-01-31', '2025-01-31T10:00:00', '2025-02-30T10:00:00Z', '2025-01-31T24:00:00Z', '2025-01-31T10:60:00Z',
      '2025-01-31T10:00:00 02:00', '2025-01-31T10:00:00+2:00', "2025-01-31T10:00:00Z' OR 1=1", 'now', '']) {
      expect(parseTimestamp(bad), bad).toBeUndefined();
    }
  });
});

describe('the representable range', () => {
  it('dates and timestamps stay within years 0001–9999, offsets included', () => {
    expect(isCalendarDate('0001-01-01')).toBe(true);
    expect(isCalendarDate('0000-12-31')).toBe(false);
    expect(parseTimestamp('0001-01-01T00:00:00Z')).toBeDefined();
    expect(parseTimestamp('9999-12-31T23:59:59.999Z')).toBeDefined();
    for (const bad of ['9999-12-31T23:59:59-23:59', '9999-12-31T23:00:00-01:00', '0001-01-01T00:00:00+00:01', '0001-01-01T10:00:00+23:59', '0000-06-01T00:00:00Z']) {
      expect(parseTimestamp(bad), bad).toBeUndefined();
    }
    // Each accepted instant prints as a plain four-digit-year ISO string (what PostgreSQL reads).
    expect(new Date(parseTimestamp('0001-01-01T23:00:00+22:00')!).toISOString()).toBe('0001-01-01T01:00:00.000Z');
  });
});
