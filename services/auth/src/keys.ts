// Signing keys: ES256 key pairs, private halves sealed with AES-256-GCM under the key-encryption key.
// The newest unretired key signs; a rotation retires the previous one, which stays in the JWKS until
// the tokens it signed have expired, so rotation needs no downtime.
//
// The key-encryption key (KEK) rotates too: AUTH_KEY_ENCRYPTION_KEY is a list, newest first. The
// newest seals; older ones only unseal. At start, resealKeys() re-seals every signing key still sealed
// under an older KEK with the newest, so the old KEK can be dropped once every replica has started
// with the new list (docs/operations.md "Rotating the key-encryption key").
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, calculateJwkThumbprint, type CryptoKey, type JWK } from 'jose';
import type { Pool, PoolClient } from '@partner/shared/db/pg';

export const SIGNING_ALG = 'ES256';

export interface SigningKey {
  kid: string;
  key: CryptoKey;
}

function seal(kek: Buffer, plaintext: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The database holds a signing key none of the configured KEKs opens: say so, and what to do. */
export class UnknownKekError extends Error {
  constructor(kid: string, kekCount: number) {
    super(
      `signing key ${kid} in the database is sealed with a key-encryption key this process does not have ` +
        `(AUTH_KEY_ENCRYPTION_KEY lists ${kekCount} key${kekCount === 1 ? '' : 's'}, none opens it). ` +
        'Set AUTH_KEY_ENCRYPTION_KEY to the key this database was set up with; to rotate it, list the new key first and the old one after it ' +
        '(NEW,OLD), start once, then drop OLD. If this database belongs to another deployment or checkout (one KEK each), give this one ' +
        'its own: set DATABASE_URL to another database and NATS_PREFIX to another prefix (npm start picks and saves both for a second ' +
        'checkout). The keys in this database are that other owner\'s: leave them.',
    );
    this.name = 'UnknownKekError';
  }
}

/** Opens a sealed private key with the first KEK that authenticates it; -1 when none does. */
function unsealAny(keks: readonly Buffer[], sealed: Buffer): { plaintext: string; index: number } | undefined {
  for (const [index, kek] of keks.entries()) {
    try {
      return { plaintext: unseal(kek, sealed), index };
    } catch {
      // Not sealed under this one (GCM authentication failed): try the next.
    }
  }
  return undefined;
}

/**
 * Re-seals under the newest KEK every signing key sealed under an older one. Fails with
 * UnknownKekError when the current signing key is sealed under none of them (a retired key no KEK
 * opens is only reported: its private half is never used again). Returns the kids re-sealed.
 */
export async function resealKeys(pool: Pool, keks: readonly Buffer[], warn: (msg: string, kid: string) => void = () => undefined): Promise<string[]> {
  const rows = await pool.query<{ kid: string; private_jwk_sealed: Buffer; retired: boolean }>(
    'SELECT kid, private_jwk_sealed, retired_at IS NOT NULL AS retired FROM signing_keys ORDER BY created_at DESC',
  );
  const resealed: string[] = [];
  for (const row of rows.rows) {
    const opened = unsealAny(keks, row.private_jwk_sealed);
    if (!opened) {
      if (!row.retired) throw new UnknownKekError(row.kid, keks.length);
      warn('a retired signing key is sealed under a key-encryption key no longer configured; it is never used again', row.kid);
      continue;
    }
    if (opened.index === 0) continue;
    // Only if nobody re-sealed it meanwhile (replicas starting together).
    const r = await pool.query('UPDATE signing_keys SET private_jwk_sealed = $2 WHERE kid = $1 AND private_jwk_sealed = $3', [
      row.kid,
      seal(keks[0]!, opened.plaintext),
      row.private_jwk_sealed,
    ]);
    if (r.rowCount) resealed.push(row.kid);
  }
  return resealed;
}

function unseal(kek: Buffer, sealed: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', kek, sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
}

/** Creates a key, makes it the signing key and retires the previous one. Returns the new kid. */
export async function rotateKey(db: Pool | PoolClient, kek: Buffer): Promise<{ kid: string; retired: string[] }> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = (await calculateJwkThumbprint(publicJwk)).slice(0, 16);
  const privateJwk = await exportJWK(privateKey);
  const retired = await db.query<{ kid: string }>(
    `WITH ins AS (
       INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk_sealed) VALUES ($1, $2, $3, $4) RETURNING kid
     )
     UPDATE signing_keys SET retired_at = now()
      WHERE retired_at IS NULL AND kid <> (SELECT kid FROM ins)
     RETURNING kid`,
    [kid, SIGNING_ALG, { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' }, seal(kek, JSON.stringify(privateJwk))],
  );
  return { kid, retired: retired.rows.map((r) => r.kid) };
}

/** Loads the current signing key, creating the first one on a fresh database. */
export async function loadSigningKey(pool: Pool, keks: Buffer | readonly Buffer[]): Promise<SigningKey> {
  const all = Buffer.isBuffer(keks) ? [keks] : keks;
  const kek = all[0]!;
  for (let attempt = 0; attempt < 2; attempt++) {
    const r = await pool.query<{ kid: string; private_jwk_sealed: Buffer }>(
      'SELECT kid, private_jwk_sealed FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1',
    );
    const row = r.rows[0];
    if (row) {
      const opened = unsealAny(all, row.private_jwk_sealed);
      if (!opened) throw new UnknownKekError(row.kid, all.length);
      const jwk = JSON.parse(opened.plaintext) as JWK;
      return { kid: row.kid, key: (await importJWK(jwk, SIGNING_ALG)) as CryptoKey };
    }
    // First start: create a key under a lock so concurrent replicas agree on one.
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await c.query("SELECT pg_advisory_xact_lock(hashtext('auth:first-key'))");
      const again = await c.query('SELECT 1 FROM signing_keys WHERE retired_at IS NULL');
      if (again.rowCount === 0) await rotateKey(c, kek);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK');
      throw err;
    } finally {
      c.release();
    }
  }
  throw new Error('no signing key could be loaded');
}

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
