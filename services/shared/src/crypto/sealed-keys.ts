// ES256 key pairs kept in a table of their service's schema, private halves sealed with AES-256-GCM
// under the key-encryption key (KEK). One implementation for the auth service's token signing keys
// and the submission service's receipt keys. The table has the columns
//   kid text PRIMARY KEY, alg text, public_jwk jsonb, private_jwk_sealed bytea,
//   created_at timestamptz DEFAULT now(), retired_at timestamptz
// The newest unretired key signs; a rotation retires the previous one (its public half stays).
//
// The KEK rotates too: its setting is a list, newest first. The newest seals; older ones only unseal.
// At start, resealKeys() re-seals every key still sealed under an older KEK with the newest, so the
// old KEK can be dropped once every replica has started with the new list (docs/operations.md
// "Rotating the key-encryption key").
//
// seal/unseal/unsealAny also serve secrets kept outside such a table (the events service's webhook
// signing secrets, services/events/src/webhooks/secrets.ts), with associated data binding each
// sealed blob to its row and column.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, calculateJwkThumbprint, type CryptoKey, type JWK } from 'jose';
import type { Pool, PoolClient } from '../db/pg.js';
import type { EnvReader } from '../config/env.js';

export const SIGNING_ALG = 'ES256';

export interface SigningKey {
  kid: string;
  key: CryptoKey;
}

/** Where a service keeps its sealed keys and how its errors name them. */
export interface KeyTable {
  /** The table (in the pool's schema), e.g. signing_keys. */
  table: string;
  /** The setting holding the KEK list, named in errors (e.g. AUTH_KEY_ENCRYPTION_KEY). */
  kekSetting: string;
  /** What the keys are, for messages ("signing key", "receipt key"). */
  what: string;
  /** Names the advisory lock under which the first key is made (concurrent replicas agree on one). */
  firstKeyLock: string;
  /** What is lost when the keys are deleted, for the UnknownKekError advice. */
  lossAdvice: string;
}

/**
 * AES-256-GCM: 12-byte IV, 16-byte tag, ciphertext. `aad` (associated data, optional) is
 * authenticated but not stored: the blob opens only with the same aad, so a caller that binds it to
 * the blob's place (a row and a column) cannot be handed a blob copied from another place.
 */
export function seal(kek: Buffer, plaintext: string, aad?: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function unseal(kek: Buffer, sealed: Buffer, aad?: string): string {
  const decipher = createDecipheriv('aes-256-gcm', kek, sealed.subarray(0, 12));
  decipher.setAuthTag(sealed.subarray(12, 28));
  if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
}

/**
 * Opens a sealed blob with the first KEK that authenticates it (with the same aad it was sealed
 * with); undefined when none does. `index` 0 is the newest KEK: anything else is due a re-seal.
 */
export function unsealAny(keks: readonly Buffer[], sealed: Buffer, aad?: string): { plaintext: string; index: number } | undefined {
  for (const [index, kek] of keks.entries()) {
    try {
      return { plaintext: unseal(kek, sealed, aad), index };
    } catch {
      // Not sealed under this one (GCM authentication failed): try the next.
    }
  }
  return undefined;
}

/** The database holds a key none of the configured KEKs opens: say so, and what to do. */
export class UnknownKekError extends Error {
  constructor(t: Pick<KeyTable, 'what' | 'kekSetting' | 'lossAdvice'>, kid: string, kekCount: number) {
    super(
      `${t.what} ${kid} in the database is sealed with a key-encryption key this process does not have ` +
        `(${t.kekSetting} lists ${kekCount} key${kekCount === 1 ? '' : 's'}, none opens it). ` +
        `Set ${t.kekSetting} to the key this database was set up with; to rotate it, list the new key first and the old one after it ` +
        '(NEW,OLD), start once, then drop OLD. If this database belongs to another deployment or checkout (one KEK each), give this one ' +
        'its own: set DATABASE_URL to another database and NATS_PREFIX to another prefix (npm start picks and saves both for a second ' +
        "checkout); the keys in this database are that other owner's: leave them. Only if this database is yours and its KEK is lost for " +
        `good: ${t.lossAdvice}`,
    );
    this.name = 'UnknownKekError';
  }
}

/**
 * Re-seals under the newest KEK every key sealed under an older one. Fails with UnknownKekError when
 * the current key is sealed under none of them (a retired key no KEK opens is only reported: its
 * private half is never used again). Returns the kids re-sealed.
 */
export async function resealKeys(
  t: KeyTable,
  pool: Pool,
  keks: readonly Buffer[],
  warn: (msg: string, kid: string) => void = () => undefined,
): Promise<string[]> {
  const rows = await pool.query<{ kid: string; private_jwk_sealed: Buffer; retired: boolean }>(
    `SELECT kid, private_jwk_sealed, retired_at IS NOT NULL AS retired FROM ${t.table} ORDER BY created_at DESC`,
  );
  const resealed: string[] = [];
  for (const row of rows.rows) {
    const opened = unsealAny(keks, row.private_jwk_sealed);
    if (!opened) {
      if (!row.retired) throw new UnknownKekError(t, row.kid, keks.length);
      warn(`a retired ${t.what} is sealed under a key-encryption key no longer configured; it is never used again`, row.kid);
      continue;
    }
    if (opened.index === 0) continue;
    // Only if nobody re-sealed it meanwhile (replicas starting together).
    const r = await pool.query(`UPDATE ${t.table} SET private_jwk_sealed = $2 WHERE kid = $1 AND private_jwk_sealed = $3`, [
      row.kid,
      seal(keks[0]!, opened.plaintext),
      row.private_jwk_sealed,
    ]);
    if (r.rowCount) resealed.push(row.kid);
  }
  return resealed;
}

/**
 * Creates a key, makes it the current one and retires the previous one (retired_at and the new key's
 * created_at are the same instant, read after any lock the caller holds). Returns the new kid.
 */
export async function rotateKey(t: KeyTable, db: Pool | PoolClient, kek: Buffer): Promise<{ kid: string; retired: string[] }> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = (await calculateJwkThumbprint(publicJwk)).slice(0, 16);
  const privateJwk = await exportJWK(privateKey);
  const retired = await db.query<{ kid: string }>(
    `WITH at AS (SELECT clock_timestamp() AS t), ins AS (
       INSERT INTO ${t.table} (kid, alg, public_jwk, private_jwk_sealed, created_at) SELECT $1, $2, $3, $4, t FROM at RETURNING kid
     )
     UPDATE ${t.table} SET retired_at = (SELECT t FROM at)
      WHERE retired_at IS NULL AND kid <> (SELECT kid FROM ins)
     RETURNING kid`,
    [kid, SIGNING_ALG, { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' }, seal(kek, JSON.stringify(privateJwk))],
  );
  return { kid, retired: retired.rows.map((r) => r.kid) };
}

/** Opens a key of the table by kid (current or retired). */
export async function openKey(t: KeyTable, db: Pool | PoolClient, keks: readonly Buffer[], kid: string): Promise<SigningKey | undefined> {
  const r = await db.query<{ private_jwk_sealed: Buffer }>(`SELECT private_jwk_sealed FROM ${t.table} WHERE kid = $1`, [kid]);
  const row = r.rows[0];
  if (!row) return undefined;
  const opened = unsealAny(keks, row.private_jwk_sealed);
  if (!opened) throw new UnknownKekError(t, kid, keks.length);
  return { kid, key: (await importJWK(JSON.parse(opened.plaintext) as JWK, SIGNING_ALG)) as CryptoKey };
}

/** Loads the current key, creating the first one on a fresh database. */
export async function loadCurrentKey(t: KeyTable, pool: Pool, keks: Buffer | readonly Buffer[]): Promise<SigningKey> {
  const all = Buffer.isBuffer(keks) ? [keks] : keks;
  const kek = all[0]!;
  for (let attempt = 0; attempt < 2; attempt++) {
    const r = await pool.query<{ kid: string; private_jwk_sealed: Buffer }>(
      `SELECT kid, private_jwk_sealed FROM ${t.table} WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1`,
    );
    const row = r.rows[0];
    if (row) {
      const opened = unsealAny(all, row.private_jwk_sealed);
      if (!opened) throw new UnknownKekError(t, row.kid, all.length);
      const jwk = JSON.parse(opened.plaintext) as JWK;
      return { kid: row.kid, key: (await importJWK(jwk, SIGNING_ALG)) as CryptoKey };
    }
    // First start: create a key under a lock so concurrent replicas agree on one.
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [t.firstKeyLock]);
      const again = await c.query(`SELECT 1 FROM ${t.table} WHERE retired_at IS NULL`);
      if (again.rowCount === 0) await rotateKey(t, c, kek);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK');
      throw err;
    } finally {
      c.release();
    }
  }
  throw new Error(`no ${t.what} could be loaded`);
}

/**
 * A KEK list setting's value: base64 keys of 32 bytes, comma-separated, newest first. Returns the
 * keys, or calls problem(message) for each bad one.
 */
export function parseKekList(value: string, problem: (message: string) => void): Buffer[] {
  const keks = value
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k) => Buffer.from(k, 'base64'));
  keks.forEach((k, i) => {
    if (k.length !== 32) problem(`key ${i + 1} of ${keks.length} must decode to 32 bytes, got ${k.length}`);
  });
  return keks;
}

/**
 * AUTH_KEY_ENCRYPTION_KEY (required) as the KEK list, newest first, for a process that opens what
 * the deployment's KEK sealed; `doc` says what this process seals with it (docs/configuration.md).
 */
export function readKekSetting(env: EnvReader, doc: string): Buffer[] {
  // Unset, env.str reports it as required (and returns undefined).
  const value = (env.str('AUTH_KEY_ENCRYPTION_KEY', { doc, range: 'base64 keys of 32 bytes' }) as string | undefined) ?? '';
  const keks = parseKekList(value, (message) => env.problem('AUTH_KEY_ENCRYPTION_KEY', message));
  if (keks.length === 0 && value !== '') env.problem('AUTH_KEY_ENCRYPTION_KEY', 'must list at least one key');
  return keks;
}
