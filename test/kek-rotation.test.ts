// Rotating the key-encryption key (issue 16): AUTH_KEY_ENCRYPTION_KEY is a list, newest first; the
// auth service re-seals older signing keys under the newest at start, so the old KEK can then be
// dropped; a database holding keys no configured KEK opens stops the start with a message saying so.
// The same for the submission service's receipt keys and the events service's webhook signing secrets.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EnvReader } from '@partner/shared/config/env';
import { createLogger } from '@partner/shared/telemetry/logger';
import { readAuthConfig } from '../services/auth/src/config.js';
import { startAuth } from '../services/auth/src/app.js';
import { readSubmissionConfig } from '../services/submission/src/config.js';
import { startSubmission } from '../services/submission/src/app.js';
import { newWebhookSecret } from '@partner/shared/domain/webhooks';
import { openSecret, sealSecret } from '../services/events/src/webhooks/secrets.js';
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

describe('the webhook signing secrets, sealed under the same key-encryption key (issue 33)', () => {
  const old = newKek();
  const next = newKek();
  const stack = useStack();
  const id = `we_${'c'.repeat(32)}`;
  const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
  const sealed = async () =>
    (await stack.sql<{ s: Buffer; p: Buffer }>('SELECT secret_sealed AS s, previous_secret_sealed AS p FROM events.webhook_endpoints WHERE endpoint_id = $1', [id]))[0]!;
  // The events service as a process (dist/), started with a KEK list; it seals before it announces
  // its ports, so it is killed once started. The auth service it calls is not needed here.
  const env = (kek: string) => ({ AUTH_KEY_ENCRYPTION_KEY: kek, AUTH_GRPC_ADDR: '127.0.0.1:9' });
  const start = async (kek: string) => {
    const events = await stack.spawnService('events', env(kek));
    events.kill('SIGKILL');
    await events.exited;
  };

  it('are re-sealed under the new key at start, open under it alone, and an unknown key stops the start naming the endpoint', async () => {
    await start(old);
    // An endpoint mid-rotation, sealed under the old key (plaintext columns are gone since migration
    // 0008; sealing them in place: test/webhook-secrets.test.ts).
    const oldKey = Buffer.from(old, 'base64');
    await stack.sql(
      `INSERT INTO events.webhook_endpoints (endpoint_id, tenant_id, partner_id, url, event_types, secret_sealed, previous_secret_sealed, previous_secret_expires_at)
       VALUES ($1, 't', 'p', 'https://hooks.example.com/x', '{*}', $2, $3, now() + interval '1 day')`,
      [id, sealSecret([oldKey], id, 'secret', current), sealSecret([oldKey], id, 'previous_secret', previous)],
    );
    await start(old);
    const before = await sealed();
    expect([openSecret([oldKey], id, 'secret', before.s), openSecret([oldKey], id, 'previous_secret', before.p)]).toEqual([current, previous]);

    await start(`${next},${old}`);
    const after = await sealed();
    expect(after.s.equals(before.s) || after.p.equals(before.p)).toBe(false);
    const nextKey = Buffer.from(next, 'base64');
    expect([openSecret([nextKey], id, 'secret', after.s), openSecret([nextKey], id, 'previous_secret', after.p)]).toEqual([current, previous]);

    // The old KEK dropped: nothing left to re-seal.
    await start(next);
    expect((await sealed()).s.equals(after.s)).toBe(true);
    // As a process: it exits non-zero with the message, naming the endpoint and the setting.
    await expect(stack.spawnService('events', env(newKek()))).rejects.toThrow(
      new RegExp(`exited 1 .*the signing secret of webhook endpoint ${id} \\(secret\\) in the database is sealed with a key-encryption key this process does not have .*AUTH_KEY_ENCRYPTION_KEY lists 1 key`, 's'),
    );
  });
});
