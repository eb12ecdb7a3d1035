// The quote vocabulary every process shares (API.md "Quotes, underwriting referrals, bind and
// issue"): statuses, the quote record as the API shows it, and the bounds of a quote request.

export const QUOTE_STATUSES = ['open', 'referred', 'declined', 'bound', 'expired', 'superseded', 'not_taken'] as const;
export type QuoteStatusName = (typeof QUOTE_STATUSES)[number];
export const isQuoteStatus = (s: string): s is QuoteStatusName => (QUOTE_STATUSES as readonly string[]).includes(s);

/** Options per quote request. */
export const MAX_QUOTE_OPTIONS = 5;

/** A rule that matched: its code and the submission field it read. */
export interface QuoteReason {
  code: string;
  field: string | null;
}

export interface QuoteRecord {
  quoteId: string;
  submissionId: string;
  productId: string;
  status: QuoteStatusName;
  option: { limit: string; retention: string };
  premium: { amount: string; currency: string } | null;
  ratingVersion: number;
  validUntil: string | null;
  referral: {
    reasons: QuoteReason[];
    dueBy: string;
    decision?: { outcome: 'approved' | 'declined'; note?: string; decidedAt: string };
  } | null;
  decline: { reasons: QuoteReason[] } | null;
  offer: string | null;
  testClockId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The claims of an offer JWS (typ offer+jws): the quote's terms under the quote's own names. */
export interface OfferClaims {
  iss: string;
  tenant: string;
  partnerId: string;
  quoteId: string;
  submissionId: string;
  productId: string;
  option: { limit: string; retention: string };
  premium: { amount: string; currency: string };
  validUntil: string;
  ratingVersion: number;
  iat: number;
}
