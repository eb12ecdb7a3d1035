import { describe, expect, it } from 'vitest';
import { checkQueryText, textIssue } from './text.js';

describe('request text', () => {
  it.each(['a\u0000b', 'Acme\u0000Corp', 'tab\there', 'line\nbreak', '\u001b[31m', 'del\u007f', 'Acme \ud800', '\udc00ref', 'x\udbff'])(
    'refuses %j',
    (s) => expect(textIssue(s)).toBeTruthy(),
  );

  it.each(['Acme Holdings LLC', 'Zürich Versicherung', '東京海上', 'emoji 🏢 ok', '\u200bzero width inside', ''])('accepts %j', (s) => {
    expect(textIssue(s)).toBeUndefined();
  });

  // The strings of a JSON body are checked in the scan of its text: json-scan.test.ts.

  it('names bad query parameters, decoded', () => {
    expect(() => checkQueryText('limit=5&status=active')).not.toThrow();
    expect(() => checkQueryText('policyNumber=a%00b')).toThrow(expect.objectContaining({ code: 'validation_error', details: [expect.objectContaining({ field: 'policyNumber' })] }));
    expect(() => checkQueryText('a%0Ab=1')).toThrow(expect.objectContaining({ details: [expect.objectContaining({ field: '"a\\nb"' })] }));
  });
});
