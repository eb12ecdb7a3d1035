// The receipt content hash: RFC 8785's own example (§3.2.2, numbers, escapes, key order) hashes as
// its canonical form does, and key order or white space of what was sent makes no difference.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contentSha256 } from './content-hash.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('contentSha256', () => {
  it('is the SHA-256 of the RFC 8785 canonical form (the RFC\'s example)', () => {
    const sent = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    ) as unknown;
    const canonical = '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}';
    expect(contentSha256(sent)).toBe(sha256(canonical));
  });

  it('does not depend on key order or white space, and does on any value', () => {
    const a = JSON.parse('{ "b": 1, "a": {"y": [1, 2], "x": "é"} }') as unknown;
    const b = JSON.parse('{"a":{"x":"é","y":[1,2]},"b":1}') as unknown;
    expect(contentSha256(a)).toBe(contentSha256(b));
    expect(contentSha256(a)).not.toBe(contentSha256({ a: { x: 'é', y: [2, 1] }, b: 1 }));
  });
});
