// Quotes (client.quotes: POST/GET /v1/submissions/{id}/quotes, GET /v1/quotes/{id}; in UAT the
// referral test helper): requesting quotes is a job (mutations.ts); reading and listing them; and
// verifying an offer offline with jose against a copy of /.well-known/receipt-keys.json, the same keys
// as receipts (verifyOffer). The types are generated from the OpenAPI document (wire-types.ts).
import { createHash } from 'node:crypto';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import type { Connection } from './connection.js';
import { QuoteBinding } from './quote-bind.js';
import type { CallOptions, MutationOptions } from './options.js';
import type { ReceiptKeySet } from './receipts.js';
import { paginate, seg, type WithResponse } from './transport.js';
import type { Page } from './types.js';
import type { ListQuotesQuery, Quote, QuoteDecide, QuoteRequest, QuotesCreated } from './wire-types.js';

export type { Quote, QuoteDecide, QuoteOption, QuoteReason, QuoteRequest, QuoteStatus, QuotesCreated } from './wire-types.js';

export const OFFER_TYP = 'offer+jws';

/** GET /v1/submissions/{id}/quotes's filters. */
export type QuoteListParams = ListQuotesQuery;

/**
 * The signed claims of an offer (docs/api.md "Quotes"): the quote's terms under the quote's own names.
 * Written here: the document describes the payload of the JWS in prose only.
 */
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

/** An offer that does not verify: its signature, its type, its key or its claims. */
export class OfferVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OfferVerificationError';
  }
}

/** Lowercase hex SHA-256 of an offer's compact JWS: what a bind's `offerSha256` names. */
export const offerHash = (jws: string): string => createHash('sha256').update(jws, 'ascii').digest('hex');

/**
 * Verifies an offer offline: its ES256 signature by a key of jwks (by kid; the receipt keys), its typ
 * `offer+jws`, that its key was signing at its iat, and its claims' shape. With `quote`, also that the
 * claims repeat that quote's terms exactly. Resolves with the claims.
 */
export async function verifyOffer(jws: string, jwks: ReceiptKeySet, quote?: Pick<Quote, 'quoteId' | 'submissionId' | 'productId' | 'option' | 'premium' | 'validUntil' | 'ratingVersion'>): Promise<OfferClaims> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    throw new OfferVerificationError('not a compact JWS');
  }
  if (header.typ !== OFFER_TYP) throw new OfferVerificationError(`typ is ${String(header.typ)}, not ${OFFER_TYP}`);
  const key = jwks.keys.find((k) => k.kid === header.kid);
  if (!key) throw new OfferVerificationError(`no key ${String(header.kid)} in the key set (fetch /.well-known/receipt-keys.json again)`);
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(jws, createLocalJWKSet(jwks as JSONWebKeySet), { algorithms: ['ES256'] }));
  } catch (err) {
    throw new OfferVerificationError(`the signature does not verify (${(err as Error).message})`);
  }
  const claims = JSON.parse(new TextDecoder().decode(payload)) as OfferClaims;
  const str = (v: unknown) => typeof v === 'string' && v !== '';
  if (
    !str(claims.quoteId) ||
    !str(claims.submissionId) ||
    !str(claims.productId) ||
    !str(claims.option?.limit) ||
    !str(claims.option?.retention) ||
    !str(claims.premium?.amount) ||
    !str(claims.premium?.currency) ||
    !str(claims.validUntil) ||
    !Number.isSafeInteger(claims.ratingVersion) ||
    !Number.isSafeInteger(claims.iat)
  ) {
    throw new OfferVerificationError('the claims are not an offer\'s');
  }
  const second = (iso: string) => Math.floor(Date.parse(iso) / 1000);
  if ((key.signedFrom && claims.iat < second(key.signedFrom)) || (key.signedUntil && claims.iat > second(key.signedUntil))) {
    throw new OfferVerificationError(`key ${key.kid} was not signing at iat ${claims.iat}`);
  }
  if (quote) {
    const differs = (
      [
        ['quoteId', claims.quoteId === quote.quoteId],
        ['submissionId', claims.submissionId === quote.submissionId],
        ['productId', claims.productId === quote.productId],
        ['option', claims.option.limit === quote.option.limit && claims.option.retention === quote.option.retention],
        ['premium', claims.premium.amount === quote.premium?.amount && claims.premium.currency === quote.premium?.currency],
        ['validUntil', claims.validUntil === quote.validUntil],
        ['ratingVersion', claims.ratingVersion === quote.ratingVersion],
      ] as const
    ).filter(([, same]) => !same);
    if (differs.length > 0) throw new OfferVerificationError(`the offer's ${differs.map(([name]) => name).join(', ')} differ from the quote's`);
  }
  return claims;
}

export class Quotes {
  constructor(private readonly connection: Connection) {}

  /** POST /v1/quotes/{id}/bind (quote-bind.ts): accepts the offer, hashing it; resolves with the policy issued. */
  bind(...args: Parameters<QuoteBinding['bind']>): ReturnType<QuoteBinding['bind']> {
    return new QuoteBinding(this.connection).bind(...args);
  }

  /** The bind without polling: the policy if it settled within the wait, else the job handle. */
  startBind(...args: Parameters<QuoteBinding['startBind']>): ReturnType<QuoteBinding['startBind']> {
    return new QuoteBinding(this.connection).startBind(...args);
  }

  /**
   * POST /v1/submissions/{id}/quotes: resolves with `{submissionId, quotes}` (one quote per option, in
   * order) once the job has succeeded. Fails with NotQuotableError, RequirementsNotMetError,
   * OptionNotOfferedError or ProductNotRatedError, creating no quote.
   */
  create(submissionId: string, input: QuoteRequest, opts: MutationOptions = {}): Promise<WithResponse<QuotesCreated>> {
    return this.connection.mutations.mutate<QuotesCreated>(() => ({ method: 'POST', path: `/v1/submissions/${seg(submissionId)}/quotes`, json: input }), opts);
  }

  /** GET /v1/quotes/{id}. */
  async get(quoteId: string, opts: CallOptions = {}): Promise<WithResponse<Quote>> {
    return (await this.connection.transport.request<Quote>({ method: 'GET', path: `/v1/quotes/${seg(quoteId)}`, ...opts })).body;
  }

  /** GET /v1/submissions/{id}/quotes: one page, newest first. */
  async list(submissionId: string, params: QuoteListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<Quote>>> {
    return (await this.connection.transport.request<Page<Quote>>({ method: 'GET', path: `/v1/submissions/${seg(submissionId)}/quotes`, query: { ...params }, ...opts })).body;
  }

  /** Every quote of a submission matching the filters, page after page. */
  iterate(submissionId: string, params: Omit<QuoteListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Quote> {
    return paginate(params, (p) => this.list(submissionId, p, opts));
  }

  /** UAT only: POST /v1/test_helpers/quotes/{id}/decide, playing the underwriter for a referred quote; resolves with the quote. */
  decideReferral(quoteId: string, input: QuoteDecide, opts: MutationOptions = {}): Promise<WithResponse<Quote>> {
    return this.connection.mutations.mutate<Quote>(() => ({ method: 'POST', path: `/v1/test_helpers/quotes/${seg(quoteId)}/decide`, json: input }), opts);
  }
}
