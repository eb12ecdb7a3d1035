// Receipt keys: ES256 key pairs in submission.receipt_keys, sealed under the key-encryption key like
// the auth service's token keys (one implementation: shared/crypto/sealed-keys.ts). The newest
// unretired key signs; a rotation (npm run admin -- key rotate --receipts) retires it. A key is never
// deleted: the JWKS at /.well-known/receipt-keys.json lists every key ever used, with the time range
// it signed, so a receipt verifies forever.
//
// Exactness of that range: every transaction that issues receipts holds KEY_LOCK shared and reads the
// current key and the time (clock_timestamp) after taking it; a rotation holds it exclusively, so no
// receipt is signed by the old key after the rotation's instant, or by the new one before it.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import * as sealed from '@partner/shared/crypto/sealed-keys';
import type { Pool, PoolClient } from '@partner/shared/db/pg';

export const RECEIPT_KEYS: sealed.KeyTable = {
  table: 'receipt_keys',
  kekSetting: 'AUTH_KEY_ENCRYPTION_KEY',
  what: 'receipt key',
  firstKeyLock: 'submission:first-receipt-key',
  lossAdvice:
    'receipts already issued still verify (their public keys stay in submission.receipt_keys); retire the unopenable key ' +
    '(UPDATE submission.receipt_keys SET retired_at = now() WHERE retired_at IS NULL) and restart: a new key is made.',
};

/** Taken shared by every receipt-issuing transaction, exclusively by a rotation. */
export const KEY_LOCK_SQL = "SELECT pg_advisory_xact_lock_shared(hashtext('submission:receipt-keys'))";
/** The current receipt key's id, as a scalar subquery (read after KEY_LOCK_SQL). */
export const CURRENT_KID_SQL = 'SELECT kid FROM receipt_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1';
const KEY_LOCK_EXCLUSIVE_SQL = "SELECT pg_advisory_xact_lock(hashtext('submission:receipt-keys'))";

/** A receipt key ready to sign: node:crypto's key object (synchronous signing, see issue.ts). */
export interface ReceiptKey {
  kid: string;
  key: KeyObject;
}

/** Opens receipt keys under the KEK list and keeps the current one (reopened only when it changes). */
export class ReceiptKeyring {
  private current?: ReceiptKey;

  constructor(
    private readonly pool: Pool,
    private readonly keks: readonly Buffer[],
  ) {}

  /** At start: re-seal under the newest KEK, then load (or make) the current key. */
  async start(warn?: (msg: string, kid: string) => void): Promise<string[]> {
    const resealed = await sealed.resealKeys(RECEIPT_KEYS, this.pool, this.keks, warn);
    const k = await sealed.loadCurrentKey(RECEIPT_KEYS, this.pool, this.keks);
    this.current = await this.toNode(k.kid, this.pool);
    return resealed;
  }

  /**
   * After KEY_LOCK_SQL (inside an issuing transaction, or read with the lock by the caller, `read`):
   * the current key and the instant the receipts are issued at (the database's clock, read after the lock).
   */
  async forTx(tx: Pool | PoolClient, read?: { kid: string | null; issuedAt: Date }): Promise<{ key: ReceiptKey; issuedAt: Date }> {
    // Read already (lockHeads' statement, after the lock), or read now.
    const { kid, at } = read
      ? { kid: read.kid, at: read.issuedAt }
      : (await tx.query<{ kid: string | null; at: Date }>(`SELECT (${CURRENT_KID_SQL}) AS kid, clock_timestamp() AS at`)).rows[0]!;
    if (!kid) throw new Error('no current receipt key (receipt_keys has none unretired)');
    if (this.current?.kid !== kid) this.current = await this.toNode(kid, tx);
    return { key: this.current, issuedAt: at };
  }

  private async toNode(kid: string, db: Pool | PoolClient): Promise<ReceiptKey> {
    const r = await db.query<{ private_jwk_sealed: Buffer }>('SELECT private_jwk_sealed FROM receipt_keys WHERE kid = $1', [kid]);
    const opened = r.rows[0] && sealed.unsealAny(this.keks, r.rows[0].private_jwk_sealed);
    if (!opened) throw new sealed.UnknownKekError(RECEIPT_KEYS, kid, this.keks.length);
    return { kid, key: createPrivateKey({ key: JSON.parse(opened.plaintext) as JWK & { kty: string }, format: 'jwk' }) };
  }
}

/** Makes a new receipt key current and retires the previous one, after every issuing transaction in flight. */
export async function rotateReceiptKey(pool: Pool, kek: Buffer): Promise<{ kid: string; retired: string[] }> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query(KEY_LOCK_EXCLUSIVE_SQL);
    const out = await sealed.rotateKey(RECEIPT_KEYS, c, kek);
    await c.query('COMMIT');
    return out;
  } catch (err) {
    await c.query('ROLLBACK');
    throw err;
  } finally {
    c.release();
  }
}

/** A receipt public key as published: the JWK plus the time range it signed (signedUntil absent while current). */
export type PublishedKey = JWK & { signedFrom: string; signedUntil?: string };

/** Every receipt key ever used, newest first: the document of /.well-known/receipt-keys.json. */
export async function receiptJwks(pool: Pool): Promise<{ keys: PublishedKey[] }> {
  const r = await pool.query<{ public_jwk: JWK; created_at: Date; retired_at: Date | null }>(
    'SELECT public_jwk, created_at, retired_at FROM receipt_keys ORDER BY created_at DESC, kid',
  );
  return {
    keys: r.rows.map((row) => ({
      ...row.public_jwk,
      signedFrom: row.created_at.toISOString(),
      ...(row.retired_at ? { signedUntil: row.retired_at.toISOString() } : {}),
    })),
  };
}
