import { describe, expect, it } from 'vitest';
import { DomainError } from '@partner/shared/domain/errors';
import { canonicalJson, fingerprint, parseIdempotencyKey } from './idempotency.js';

describe('Idempotency-Key', () => {
  it('accepts bare and quoted keys alike', () => {
    expect(parseIdempotencyKey('abc-123')).toBe('abc-123');
    expect(parseIdempotencyKey('"abc-123"')).toBe('abc-123');
    expect(parseIdempotencyKey('"a \\"quoted\\" \\\\ key"')).toBe('a "quoted" \\ key');
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('k'.repeat(255))).toHaveLength(255);
  });

  it.each(['', '   ', '""', 'k'.repeat(256), '"abc', '"a"b"', '"bad \\x escape"', 'tab\there', 'caf\u00e9'])('refuses %j', (key) => {
    expect(() => parseIdempotencyKey(key)).toThrow(DomainError);
  });
});

describe('request fingerprint', () => {
  it('ignores key order and white space but not values', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: null } })).toBe('{"a":{"c":null,"d":[1,2]},"b":1}');
    expect(fingerprint({ a: 1, b: 2 })).toBe(fingerprint({ b: 2, a: 1 }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
    expect(fingerprint([1, 2])).not.toBe(fingerprint([2, 1]));
  });
});
