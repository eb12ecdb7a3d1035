import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, EnvReader } from '../config/env.js';
import { readKekSetting, seal, unseal, unsealAny } from './sealed-keys.js';

describe('seal and unseal (AES-256-GCM under a key-encryption key)', () => {
  const [a, b] = [randomBytes(32), randomBytes(32)];

  it('round-trips, with a fresh IV each time; without associated data as before (the signing and receipt keys)', () => {
    const one = seal(a, 'whsec_x');
    expect(one.subarray(28).toString('utf8')).not.toContain('whsec_x');
    expect(seal(a, 'whsec_x').equals(one)).toBe(false);
    expect(unseal(a, one)).toBe('whsec_x');
    expect(() => unseal(b, one)).toThrow();
  });

  it('binds a blob to its associated data: it opens only with the same, never with none or another', () => {
    const blob = seal(a, 'whsec_x', 'place/we_1/secret');
    expect(unseal(a, blob, 'place/we_1/secret')).toBe('whsec_x');
    expect(() => unseal(a, blob, 'place/we_2/secret')).toThrow();
    expect(() => unseal(a, blob, 'place/we_1/previous_secret')).toThrow();
    expect(() => unseal(a, blob)).toThrow();
    expect(() => unseal(a, seal(a, 'whsec_x'), 'place/we_1/secret')).toThrow();
  });

  it('unsealAny opens with the first KEK of the list that authenticates, and says which', () => {
    const blob = seal(b, 'whsec_x', 'p');
    expect(unsealAny([a, b], blob, 'p')).toEqual({ plaintext: 'whsec_x', index: 1 });
    expect(unsealAny([b], blob, 'p')).toEqual({ plaintext: 'whsec_x', index: 0 });
    expect(unsealAny([a], blob, 'p')).toBeUndefined();
    expect(unsealAny([a, b], blob, 'q')).toBeUndefined();
  });
});

describe('readKekSetting (AUTH_KEY_ENCRYPTION_KEY for the processes that open what it sealed)', () => {
  const read = (v?: string) => {
    const env = new EnvReader(v === undefined ? {} : { AUTH_KEY_ENCRYPTION_KEY: v });
    return env.done({ keks: readKekSetting(env, 'what it seals') }).keks;
  };
  it('is required, a list of 32-byte base64 keys, newest first', () => {
    const [k1, k2] = [randomBytes(32), randomBytes(32)];
    expect(read(`${k1.toString('base64')}, ${k2.toString('base64')}`)).toEqual([k1, k2]);
    expect(() => read()).toThrow(ConfigError);
    expect(() => read()).toThrow(/AUTH_KEY_ENCRYPTION_KEY is required \(what it seals\)/);
    expect(() => read(',')).toThrow(/AUTH_KEY_ENCRYPTION_KEY must list at least one key/);
    expect(() => read(`${k1.toString('base64')},c2hvcnQ=`)).toThrow(/key 2 of 2 must decode to 32 bytes, got 5/);
  });
});
