// Offers (API.md "Quotes, underwriting referrals, bind and issue"): a quote's terms signed with the
// receipt keys (the same keyring, the same JWKS at /.well-known/receipt-keys.json, the same signing
// code as receipts) as a compact JWS of type offer+jws. An offer is not part of the receipt chain: it
// has no seq or prev; the bind's receipt names its hash.
import { DomainError } from '@partner/shared/domain/errors';
import type { Pool } from '@partner/shared/db/pg';
import type { OfferClaims } from '@partner/shared/domain/quotes';
import { CURRENT_KID_SQL, KEY_LOCK_SQL, type ReceiptKeyring } from './keys.js';
import { OFFER_TYP, sha256Hex, signCompact } from './issue.js';

export type OfferTerms = Omit<OfferClaims, 'iss' | 'iat' | 'tenant' | 'partnerId'>;

/** Parses the terms a SignOffer request carries (the policy service's, so a bad one is a bug: validation_error). */
export function parseOfferTerms(json: string): OfferTerms {
  let t: Partial<OfferTerms>;
  try {
    t = JSON.parse(json) as Partial<OfferTerms>;
  } catch {
    throw new DomainError('validation_error', 'claims_json is not JSON');
  }
  const str = (v: unknown) => typeof v === 'string' && v !== '';
  if (
    !t ||
    !str(t.quoteId) ||
    !str(t.submissionId) ||
    !str(t.productId) ||
    !str(t.option?.limit) ||
    !str(t.option?.retention) ||
    !str(t.premium?.amount) ||
    !str(t.premium?.currency) ||
    !str(t.validUntil) ||
    !Number.isSafeInteger(t.ratingVersion)
  ) {
    throw new DomainError('validation_error', 'claims_json must carry quoteId, submissionId, productId, option, premium, validUntil and ratingVersion');
  }
  return {
    quoteId: t.quoteId!,
    submissionId: t.submissionId!,
    productId: t.productId!,
    option: { limit: t.option!.limit, retention: t.option!.retention },
    premium: { amount: t.premium!.amount, currency: t.premium!.currency },
    validUntil: t.validUntil!,
    ratingVersion: t.ratingVersion!,
  };
}

/**
 * The lock, then the current key's id and the database's clock, read after it: two statements of one
 * simple query, which PostgreSQL runs as one implicit transaction (the lock held to its end, the read
 * under a snapshot taken after the lock; an error rolls both back). One round trip where BEGIN, the
 * lock, the read and COMMIT took four; nothing is written, so nothing needs a transaction of its own.
 */
const SIGNING_READ = `${KEY_LOCK_SQL}; SELECT (${CURRENT_KID_SQL}) AS kid, clock_timestamp() AS at`;

/**
 * Signs an offer with the current receipt key. Under KEY_LOCK_SQL (shared), like every receipt, so
 * the key's published signedFrom/signedUntil range covers the offer's iat (a rotation retires the key
 * at its clock after taking the lock exclusively, so after any iat read under it).
 */
export async function signOffer(
  pool: Pool,
  keyring: ReceiptKeyring,
  iss: string,
  owner: { tenantId: string; partnerId: string },
  terms: OfferTerms,
): Promise<{ jws: string; sha256: string }> {
  const results = (await pool.query(SIGNING_READ)) as unknown as { rows: { kid: string | null; at: Date }[] }[];
  const read = results[results.length - 1]!.rows[0]!;
  const { key, issuedAt } = await keyring.forTx(pool, { kid: read.kid, issuedAt: read.at });
  const claims: OfferClaims = { iss, tenant: owner.tenantId, partnerId: owner.partnerId, ...terms, iat: Math.floor(issuedAt.getTime() / 1000) };
  const jws = signCompact(key.key, key.kid, claims, OFFER_TYP);
  return { jws, sha256: sha256Hex(jws) };
}
