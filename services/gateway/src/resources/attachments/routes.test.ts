import { describe, expect, it } from 'vitest';
import { DomainError } from '@partner/shared/domain/errors';
import { etagMatches, parseListQuery } from './routes.js';

describe('parseListQuery', () => {
  it('takes limit 1..200 and an opaque cursor', () => {
    expect(parseListQuery('')).toEqual({ pageSize: 0, pageToken: '' });
    expect(parseListQuery('limit=1&cursor=AbC_-9')).toEqual({ pageSize: 1, pageToken: 'AbC_-9' });
    expect(parseListQuery('limit=200&cursor=')).toEqual({ pageSize: 200, pageToken: '' });
  });

  it('reports every bad parameter at once', () => {
    try {
      parseListQuery('limit=0&cursor=a%2Fb&sort=asc');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe('validation_error');
      expect((err as DomainError).details?.map((d) => d.field).sort()).toEqual(['cursor', 'limit', 'sort']);
    }
    for (const q of ['limit=201', 'limit=-1', 'limit=1.5', 'limit=', 'limit=1&limit=2', `cursor=${'a'.repeat(513)}`]) {
      expect(() => parseListQuery(q), q).toThrow(DomainError);
    }
  });
});

describe('etagMatches', () => {
  const etag = '"abc"';
  it('matches the tag, a list holding it, weak forms and *', () => {
    expect(etagMatches('"abc"', etag)).toBe(true);
    expect(etagMatches('"x", "abc"', etag)).toBe(true);
    expect(etagMatches('W/"abc"', etag)).toBe(true);
    expect(etagMatches('*', etag)).toBe(true);
  });
  it('does not match anything else', () => {
    expect(etagMatches('', etag)).toBe(false);
    expect(etagMatches('"abcd"', etag)).toBe(false);
    expect(etagMatches('abc', etag)).toBe(false);
  });
});
