// Rotating the key-encryption key (issue 16): AUTH_KEY_ENCRYPTION_KEY is a list, newest first; the
// auth service re-seals older signing keys under the newest at start, so the old KEK can then be
// dropped; a database holding keys no configured KEK opens stops the start with a message saying so.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EnvReader } from '@partner/shared/process/config';
import { createLogger } from '@partner/shared/telemetry/logger';
import { readAuthConfig } from '../services/auth/src/config.js';
import { startAuth } from '../services/auth/src/app.js';
import { readSubmissionConfig } from '../services/submission/src/config.js';
import { startSubmission } from '../services/submission/src/app.js';
import { useStack } from './support/use-stack.js';

const quiet = createLogger('test', 'silent');
const newKek = () => randomBytes(32).toString('base64');

describe('key-encryption key rotation', () => {
  const old = newKek();
  const next = newKek();
  const stack = useStack(async (stack) => {
    stack.env.AUTH_KEY_ENCRYPTION_KEY = old;
  });

  const sealed = async () =>
    Object.fromEntries((await stack.sql<{ kid: string; s: Buffer }>('SELECT kid, private_jwk_sealed AS s FROM auth.signing_keys')).map((r) => [r.kid, r.s.toString('hex')]));
  const start = (kek: string) => startAuth(readAuthConfig(new EnvReader({ ...stack.env, AUTH_KEY_ENCRYPTION_KEY: kek })), { logger: quiet });

  it('re-seals under the new key when listed first, then runs on the new key alone with the same signing key', async () => {
    const first = await start(old);
    await first.stop();
    const before = await sealed();
    expect(Object.keys(before)).toHaveLength(1);

    const rotating = await start(`${next},${old}`);
    await rotating.stop();
    const after = await sealed();
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(Object.values(after)).not.toEqual(Object.values(before));

    // The old KEK dropped: the same signing key still loads (no new key was made).
    const rotated = await start(next);
    await rotated.stop();
    expect(Object.keys(await sealed())).toEqual(Object.keys(before));
  });

  it('fails at start with a message naming the problem and the fix when no configured key opens the signing key', async () => {
    await expect(start(newKek())).rejects.toThrow(/sealed with a key-encryption key this process does not have .*AUTH_KEY_ENCRYPTION_KEY lists 1 key.*NEW,OLD/);
    // As a process: it exits non-zero with that message (not "Unsupported state or unable to authenticate data").
    const spawned = stack.spawnService('auth', { AUTH_KEY_ENCRYPTION_KEY: newKek() });
    await expect(spawned).rejects.toThrow(/exited 1 .*sealed with a key-encryption key this process does not have/s);
  });

  it('refuses a list entry that is not a 32-byte key, naming which', () => {
    expect(() => readAuthConfig(new EnvReader({ ...stack.env, AUTH_KEY_ENCRYPTION_KEY: `${next},c2hvcnQ=` }))).toThrow(/key 2 of 2 must decode to 32 bytes/);
  });
});

describe('the receipt keys, sealed under the same key-encryption key (issue 32)', () => {
  const old = newKek();
  const next = newKek();
  const stack = useStack();
  const sealed = async () =>
    Object.fromEntries((await stack.sql<{ kid: string; s: Buffer }>('SELECT kid, private_jwk_sealed AS s FROM submission.receipt_keys')).map((r) => [r.kid, r.s.toString('hex')]));
  const start = (kek: string) => startSubmission(readSubmissionConfig(new EnvReader({ ...stack.env, AUTH_KEY_ENCRYPTION_KEY: kek })), { logger: quiet });

  it('are re-sealed under the new key at start, kept across the rotation, and an unknown key stops the start naming them', async () => {
    await (await start(old)).stop();
    const before = await sealed();
    expect(Object.keys(before)).toHaveLength(1);
    await (await start(`${next},${old}`)).stop();
    const after = await sealed();
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(Object.values(after)).not.toEqual(Object.values(before));
    await (await start(next)).stop();
    expect(Object.keys(await sealed())).toEqual(Object.keys(before));
    await expect(start(newKek())).rejects.toThrow(/receipt key \S+ in the database is sealed with a key-encryption key this process does not have .*AUTH_KEY_ENCRYPTION_KEY lists 1 key/);
  });
});
