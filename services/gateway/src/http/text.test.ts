import { describe, expect, it } from 'vitest';
import type { ErrorDetail } from '@partner/shared/errors';
import { checkJsonText, checkQueryText, textIssue } from './text.js';

describe('request text', () => {
  it.each(['a\u0000b', 'Acme\u0000Corp', 'tab\there', 'line\nbreak', '\u001b[31m', 'del\u007f', 'Acme \ud800', '\udc00ref', 'x\udbff'])(
    'refuses %j',
    (s) => expect(textIssue(s)).toBeTruthy(),
  );

  it.each(['Acme Holdings LLC', 'Zürich Versicherung', '東京海上', 'emoji 🏢 ok', '\u200bzero width inside', ''])('accepts %j', (s) => {
    expect(textIssue(s)).toBeUndefined();
  });

  it('names every bad string of a body at any depth, member names included', () => {
    const details: ErrorDetail[] = [];
    checkJsonText({ externalRef: 'a\u0000b', applicant: { legalName: 'Acme \ud800' }, list: ['ok', '\u0001'], ['k\u0000']: 1, n: 5 }, details);
    expect(details.map((d) => d.field)).toEqual(['externalRef', 'applicant.legalName', 'list.1', '"k\\u0000"']);
    const top: ErrorDetail[] = [];
    checkJsonText('\u0000', top);
    expect(top).toEqual([{ field: '(body)', issue: expect.stringMatching(/control/) }]);
  });

  it('names bad query parameters, decoded', () => {
    expect(() => checkQueryText('limit=5&status=active')).not.toThrow();
    expect(() => checkQueryText('policyNumber=a%00b')).toThrow(expect.objectContaining({ code: 'validation_error', details: [expect.objectContaining({ field: 'policyNumber' })] }));
    expect(() => checkQueryText('a%0Ab=1')).toThrow(expect.objectContaining({ details: [expect.objectContaining({ field: '"a\\nb"' })] }));
  });
});
