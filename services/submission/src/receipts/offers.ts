// Offers (API.md "Quotes, underwriting referrals, bind and issue"): a quote's terms signed with the
// receipt keys (the same keyring, the same JWKS at /.well-known/receipt-keys.json, the same signing
// code as receipts) as a compact JWS of type offer+jws. An offer is not part of the receipt chain: it
// has no seq or prev; the bind's receipt names its hash.
import { DomainError } from '@partner/shared/domain/errors';
import { withTx, type Pool } from '@partner/shared/db/pg';
import type { OfferClaims } from '@partner/shared/domain/quotes';
import { KEY_LOCK_SQL, type ReceiptKeyring } from './keys.js';
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
 * Signs an offer with the current receipt key. Under KEY_LOCK_SQL (shared), like every receipt, so
 * the key's published signedFrom/signedUntil range covers the offer's iat.
 */
export async function signOffer(
  pool: Pool,
  keyring: ReceiptKeyring,
  iss: string,
  owner: { tenantId: string; partnerId: string },
  terms: OfferTerms,
): Promise<{ jws: string; sha256: string }> {
  return withTx(pool, async (tx) => {
    await tx.query(KEY_LOCK_SQL);
    const { key, issuedAt } = await keyring.forTx(tx);
    const claims: OfferClaims = { iss, tenant: owner.tenantId, partnerId: owner.partnerId, ...terms, iat: Math.floor(issuedAt.getTime() / 1000) };
    const jws = signCompact(key.key, key.kid, claims, OFFER_TYP);
    return { jws, sha256: sha256Hex(jws) };
  });
}
