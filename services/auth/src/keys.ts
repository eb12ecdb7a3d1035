// Signing keys: ES256 key pairs, private halves sealed with AES-256-GCM under the key-encryption key
// (services/shared/src/crypto/sealed-keys.ts, shared with the submission service's receipt keys).
// The newest unretired key signs; a rotation retires the previous one, which stays in the JWKS until
// the tokens it signed have expired, so rotation needs no downtime.
//
// The key-encryption key (KEK) rotates too: AUTH_KEY_ENCRYPTION_KEY is a list, newest first. The
// newest seals; older ones only unseal. At start, resealKeys() re-seals every signing key still sealed
// under an older KEK with the newest, so the old KEK can be dropped once every replica has started
// with the new list (docs/operations.md "Rotating the key-encryption key").
import type { JWK } from 'jose';
import type { Pool, PoolClient } from '@partner/shared/db/pg';
import * as sealed from '@partner/shared/crypto/sealed-keys';

export { SIGNING_ALG, UnknownKekError, type SigningKey } from '@partner/shared/crypto/sealed-keys';

const SIGNING_KEYS: sealed.KeyTable = {
  table: 'signing_keys',
  kekSetting: 'AUTH_KEY_ENCRYPTION_KEY',
  what: 'signing key',
  firstKeyLock: 'auth:first-key',
  lossAdvice: 'delete them (DELETE FROM auth.signing_keys) and restart; a new key is made, and tokens issued before stop verifying.',
};

/**
 * Re-seals under the newest KEK every signing key sealed under an older one. Fails with
 * UnknownKekError when the current signing key is sealed under none of them. Returns the kids re-sealed.
 */
export const resealKeys = (pool: Pool, keks: readonly Buffer[], warn?: (msg: string, kid: string) => void): Promise<string[]> =>
  sealed.resealKeys(SIGNING_KEYS, pool, keks, warn);

/** Creates a key, makes it the signing key and retires the previous one. Returns the new kid. */
export const rotateKey = (db: Pool | PoolClient, kek: Buffer): Promise<{ kid: string; retired: string[] }> => sealed.rotateKey(SIGNING_KEYS, db, kek);

/** Loads the current signing key, creating the first one on a fresh database. */
export const loadSigningKey = (pool: Pool, keks: Buffer | readonly Buffer[]): Promise<sealed.SigningKey> => sealed.loadCurrentKey(SIGNING_KEYS, pool, keks);

/** Public keys that may still verify live tokens: the signing key and keys retired within the TTL. */
export async function publicJwks(pool: Pool, tokenTtlSeconds: number): Promise<{ keys: JWK[] }> {
  const r = await pool.query<{ public_jwk: JWK }>(
    `SELECT public_jwk FROM signing_keys
      WHERE retired_at IS NULL OR retired_at > now() - make_interval(secs => $1)
      ORDER BY created_at DESC`,
    [tokenTtlSeconds + 60],
  );
  return { keys: r.rows.map((row) => row.public_jwk) };
}
