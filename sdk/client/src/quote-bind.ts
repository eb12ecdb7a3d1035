// The bind (client.quotes.bind: POST /v1/quotes/{id}/bind): accepts an open quote's offer and resolves
// with the policy issued once the job has succeeded. The SDK computes `offerSha256` itself from the
// offer JWS the partner accepts (the quote's `offer`, exactly as GET /v1/quotes/{id} showed it), so
// the hash names the very terms read. A quote that is no longer open fails 409 quote_not_open (its
// `details` name the status), a changed offer 409 offer_changed, a withdrawn submission 409
// not_quotable (PartnerApiError).
import { createHash } from 'node:crypto';
import type { Connection } from './connection.js';
import type { MutationOutcome } from './mutations.js';
import type { MutationOptions } from './options.js';
import { seg, type WithResponse } from './transport.js';
import type { Policy } from './wire-types.js';

/** Lowercase hex SHA-256 of an offer JWS (its ASCII bytes): what a bind sends as `offerSha256`. */
export const offerSha256 = (offer: string): string => createHash('sha256').update(offer, 'ascii').digest('hex');

/** The offer accepted: its compact JWS, or a quote (its `offer`). */
export type AcceptedOffer = string | { offer: string | null };

function hashOf(offer: AcceptedOffer): string {
  const jws = typeof offer === 'string' ? offer : offer.offer;
  if (typeof jws !== 'string' || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(jws)) {
    throw new TypeError('bind: the offer must be the quote\'s offer, a compact JWS (only an open quote has one)');
  }
  return offerSha256(jws);
}

export class QuoteBinding {
  constructor(private readonly connection: Connection) {}

  /** POST /v1/quotes/{id}/bind: resolves with the policy once the bind job has succeeded. */
  bind(quoteId: string, offer: AcceptedOffer, opts: MutationOptions = {}): Promise<WithResponse<Policy>> {
    const json = { offerSha256: hashOf(offer) };
    return this.connection.mutations.mutate<Policy>(() => ({ method: 'POST', path: `/v1/quotes/${seg(quoteId)}/bind`, json }), opts);
  }

  /** The bind without polling: the policy if the job settled within the wait, else the job handle. */
  startBind(quoteId: string, offer: AcceptedOffer, opts: Omit<MutationOptions, 'timeoutMs' | 'onPoll'> = {}): Promise<MutationOutcome<Policy>> {
    return this.connection.mutations.start<Policy>({ method: 'POST', path: `/v1/quotes/${seg(quoteId)}/bind`, json: { offerSha256: hashOf(offer) } }, opts);
  }
}
