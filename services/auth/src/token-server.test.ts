import { describe, expect, it } from 'vitest';
import { parseBasic } from './token-server.js';
import { hashSecret, newClientSecret, secretMatches } from './secrets.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('HTTP Basic client authentication (RFC 6749 §2.3.1)', () => {
  it('form-decodes the id and the secret', () => {
    expect(parseBasic(`Basic ${b64('cli_1:sk_abc')}`)).toEqual({ id: 'cli_1', secret: 'sk_abc' });
    expect(parseBasic(`basic ${b64('my%3Aclient:a+b%2Bc')}`)).toEqual({ id: 'my:client', secret: 'a b+c' });
  });

  it.each([undefined, '', 'Bearer abc', `Basic ${b64('no-colon')}`, 'Basic !!!', `Basic ${b64('bad%zz:x')}`])('refuses %j', (h) => {
    expect(parseBasic(h)).toBeUndefined();
  });
});

describe('client secrets', () => {
  it('are long random values checked against their hash only', () => {
    const secret = newClientSecret();
    expect(Buffer.from(secret.slice(3), 'base64url')).toHaveLength(32);
    expect(secretMatches(secret, hashSecret(secret))).toBe(true);
    expect(secretMatches(`${secret}x`, hashSecret(secret))).toBe(false);
    expect(newClientSecret()).not.toBe(secret);
  });
});
