// The quote RPCs of the policy service (proto/partner/policy/v1/policy.proto): reads, a product's
// current rating plan (the worker rates with it), storing a job's quotes, and underwriters' decisions.
// Offers are signed by the submission service (the owner of the receipt keys) between the rating and
// CreateQuotes, and between PrepareDecision and DecideQuote: the worker (or the admin command) calls it.
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { dbError, withTx, type Pool } from '@partner/shared/db/pg';
import { clockOfTime, wallClock } from '@partner/shared/domain/clock';
import { isJobId, isUuid } from '@partner/shared/domain/ids';
import { bindingOf, type CursorCodec } from '@partner/shared/domain/list-cursor';
import { isQuoteStatus, MAX_QUOTE_OPTIONS, type OfferClaims } from '@partner/shared/domain/quotes';
import type { natsNames } from '@partner/shared/nats/client';
import type { RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { Quote } from '@partner/shared/generated/partner/policy/v1/Quote';
import type { PolicyOwner__Output } from '@partner/shared/generated/partner/policy/v1/PolicyOwner';
import type { RateQuotesRequest__Output } from '@partner/shared/generated/partner/policy/v1/RateQuotesRequest';
import type { CreateQuotesRequest__Output } from '@partner/shared/generated/partner/policy/v1/CreateQuotesRequest';
import type { PrepareDecisionRequest__Output } from '@partner/shared/generated/partner/policy/v1/PrepareDecisionRequest';
import type { DecideQuoteRequest__Output } from '@partner/shared/generated/partner/policy/v1/DecideQuoteRequest';
import type { ListQuotesRequest__Output } from '@partner/shared/generated/partner/policy/v1/ListQuotesRequest';
import { productNotRated, rateOptions, type RatedQuote } from '@partner/shared/domain/rating';
import { currentRatingPlan } from '../rating/repository.js';
import {
  getQuote,
  getQuoteById,
  insertQuotes,
  quotesLockSql,
  listQuotes,
  lockQuote,
  quoteDecidedByJob,
  quoteListFilters,
  quoteRecord,
  quotesOfJob,
  recordDecision,
  type NewQuote,
  type Owner,
  type QuoteRow,
} from './repository.js';

const DAY_MS = 86_400_000;
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;
/** A premium an underwriter sets: a non-negative decimal with at most two decimals. */
export const PREMIUM = /^(0|[1-9][0-9]{0,14})(\.[0-9]{1,2})?$/;
/** The decline reason of an underwriter's decline made without one (the UAT decide). */
export const UNDERWRITER_DECLINED = 'underwriter_declined';

export const toQuote = (row: QuoteRow): Quote => ({ quoteId: row.quote_id, recordJson: JSON.stringify(quoteRecord(row)) });

function ownerOf(owner: PolicyOwner__Output | null): Owner {
  if (!owner?.tenantId || !owner.partnerId) throw new DomainError('validation_error', 'owner (tenant and partner) is required');
  return { tenantId: owner.tenantId, partnerId: owner.partnerId };
}

/** The offer claims of a quote's terms, without iss, iat and the owner (the signer adds them). */
export function offerTerms(q: {
  quoteId: string;
  submissionId: string;
  productId: string;
  option: { limit: string; retention: string };
  premium: { amount: string; currency: string };
  validUntil: string;
  ratingVersion: number;
}): Omit<OfferClaims, 'iss' | 'iat' | 'tenant' | 'partnerId'> {
  return {
    quoteId: q.quoteId,
    submissionId: q.submissionId,
    productId: q.productId,
    option: { limit: q.option.limit, retention: q.option.retention },
    premium: { amount: q.premium.amount, currency: q.premium.currency },
    validUntil: q.validUntil,
    ratingVersion: q.ratingVersion,
  };
}

export interface QuoteServiceDeps {
  pool: Pool;
  names: ReturnType<typeof natsNames>;
  codec: CursorCodec;
  /** Hands events recorded by a committed transaction to the relay's fast path. */
  published(events: RecordedEvent[]): void;
  newId(): string;
}

export function quoteService(d: QuoteServiceDeps) {
  const { pool, names, codec } = d;

  const GetQuote = async (req: { owner: PolicyOwner__Output | null; quoteId: string }) => {
    const row = await getQuote(pool, ownerOf(req.owner), req.quoteId).catch(dbError);
    if (!row) throw notFound('quote');
    return { quote: toQuote(row) };
  };

  const ListQuotes = async (req: ListQuotesRequest__Output) => {
    const owner = ownerOf(req.owner);
    if (!isUuid(req.submissionId)) throw notFound('submission');
    const details: ErrorDetail[] = [];
    let limit = DEFAULT_PAGE;
    if (req.pageSize !== 0) {
      if (Number.isInteger(req.pageSize) && req.pageSize >= 1 && req.pageSize <= MAX_PAGE) limit = req.pageSize;
      else details.push({ field: 'limit', issue: `must be an integer from 1 to ${MAX_PAGE}` });
    }
    let status: QuoteRow['status'] | undefined;
    if (req.status !== '') {
      if (isQuoteStatus(req.status)) status = req.status;
      else details.push({ field: 'status', issue: 'is not a quote status' });
    }
    const submissionId = req.submissionId.toLowerCase();
    const args = { submissionId, limit, ...(status ? { status } : {}) };
    if (details.length === 0 && req.pageToken !== '') {
      const after = codec.decode(req.pageToken, bindingOf(owner, quoteListFilters(args)));
      if (after) Object.assign(args, { after });
      else details.push({ field: 'cursor', issue: 'is not a cursor of this listing: pass nextCursor unchanged, with the same filters' });
    }
    if (details.length > 0) throw new DomainError('validation_error', 'invalid list parameters', { details });
    const page = await listQuotes(pool, owner, args, codec).catch(dbError);
    return { quotes: page.rows.map(toQuote), nextPageToken: page.nextCursor };
  };

  const GetJobQuotes = async (req: { owner: PolicyOwner__Output | null; jobId: string }) => {
    const owner = ownerOf(req.owner);
    const rows = await quotesOfJob(pool, req.jobId).catch(dbError);
    return { quotes: rows.filter((r) => r.tenant_id === owner.tenantId && r.partner_id === owner.partnerId).map(toQuote) };
  };

  const GetRatingPlan = async (req: { productId: string }) => {
    if (!isUuid(req.productId)) throw new DomainError('validation_error', 'product_id must be a UUID');
    const current = await currentRatingPlan(pool, req.productId.toLowerCase()).catch(dbError);
    if (!current) throw productNotRated(req.productId);
    return { ratingVersion: current.ratingVersion, planJson: JSON.stringify(current.plan) };
  };

  const RateQuotes = async (req: RateQuotesRequest__Output) => {
    ownerOf(req.owner);
    if (!isUuid(req.productId)) throw new DomainError('validation_error', 'product_id must be a UUID');
    if (req.options.length < 1 || req.options.length > MAX_QUOTE_OPTIONS) throw new DomainError('validation_error', `1 to ${MAX_QUOTE_OPTIONS} options`);
    let submission: Record<string, unknown>;
    try {
      submission = JSON.parse(req.submissionJson) as Record<string, unknown>;
    } catch {
      throw new DomainError('validation_error', 'submission_json is not JSON');
    }
    const now = clockOfTime(req.clockTime).now();
    const current = await currentRatingPlan(pool, req.productId.toLowerCase()).catch(dbError);
    if (!current) throw productNotRated(req.productId);
    const rated = rateOptions(current, submission, req.options, now, d.newId);
    const { ratingVersion } = current;
    return { ratingVersion, ratedJson: JSON.stringify(rated) };
  };

  const CreateQuotes = async (req: CreateQuotesRequest__Output) => {
    const owner = ownerOf(req.owner);
    if (!isJobId(req.jobId) || !isUuid(req.submissionId) || !isUuid(req.productId)) {
      throw new DomainError('validation_error', 'a job id, a UUID submission_id and product_id are required');
    }
    const rated = JSON.parse(req.quotesJson) as RatedQuote[];
    // At least one: so a statement that wrote no quote can only mean a replaced plan (rating_plan_changed).
    if (!Array.isArray(rated) || rated.length < 1 || rated.length > MAX_QUOTE_OPTIONS) {
      throw new DomainError('validation_error', `quotes_json must hold 1 to ${MAX_QUOTE_OPTIONS} rated quotes`);
    }
    const quotes: NewQuote[] = rated.map((q) => {
      if (q.status === 'open' && !q.offer) throw new DomainError('validation_error', `open quote ${q.quoteId} has no offer`);
      return {
        quoteId: q.quoteId,
        option: q.option,
        status: q.status,
        premium: q.status === 'declined' ? null : q.premium,
        validUntil: q.validUntil ? new Date(q.validUntil) : null,
        referral: q.referral ? { reasons: q.referral.reasons, dueBy: new Date(q.referral.dueBy) } : null,
        decline: q.decline,
        offer: q.status === 'open' ? (q.offer ?? null) : null,
      };
    });
    const submissionId = req.submissionId.toLowerCase();
    const out = await withTx(
      pool,
      (c) =>
        insertQuotes(c, names, {
          owner,
          submissionId,
          productId: req.productId.toLowerCase(),
          jobId: req.jobId,
          ratingVersion: Number(req.ratingVersion),
          testClockId: req.testClockId || null,
          quotes,
        }),
      // The submission's quote lock with BEGIN, in one round trip.
      { lead: [quotesLockSql(submissionId)] },
    ).catch(dbError);
    d.published(out.events);
    return { quotes: out.quotes.map(toQuote) };
  };

  /** The quote a decision is about: the owner's, or any tenant's for an operator (no owner). */
  const decisionOwner = (owner: PolicyOwner__Output | null): Owner | null => (owner?.tenantId && owner.partnerId ? ownerOf(owner) : null);
  const notReferred = (row: QuoteRow) =>
    new DomainError('conflict', `quote ${row.quote_id} is ${row.status}: only a referred quote can be decided`, {
      details: [{ field: 'status', issue: `is ${row.status}, not referred` }],
    });
  const checkOutcome = (outcome: string): 'approved' | 'declined' => {
    if (outcome === 'approved' || outcome === 'declined') return outcome;
    throw new DomainError('validation_error', 'outcome must be approved or declined', { details: [{ field: 'outcome', issue: 'must be approved or declined' }] });
  };

  const PrepareDecision = async (req: PrepareDecisionRequest__Output) => {
    const owner = decisionOwner(req.owner);
    const outcome = checkOutcome(req.outcome);
    const row = await (owner ? getQuote(pool, owner, req.quoteId) : getQuoteById(pool, req.quoteId)).catch(dbError);
    if (!row) throw notFound('quote');
    if (req.jobId !== '') {
      const mine = await quoteDecidedByJob(pool, req.jobId).catch(dbError);
      if (mine) return { quote: toQuote(mine), decided: true, offerClaimsJson: '' };
    }
    if (row.status !== 'referred') throw notReferred(row);
    if (outcome === 'declined') return { quote: toQuote(row), decided: false, offerClaimsJson: '' };
    if (req.premium !== '' && !PREMIUM.test(req.premium)) {
      throw new DomainError('validation_error', 'premium must be a decimal string such as "1250.00"', { details: [{ field: 'premium', issue: 'must be a non-negative decimal string with at most two decimals' }] });
    }
    const current = await currentRatingPlan(pool, row.product_id).catch(dbError);
    const validDays = current?.plan.validDays;
    if (validDays === undefined) throw new DomainError('product_not_rated', `product ${row.product_id} has no rating plan any more`);
    const now = clockOfTime(req.clockTime).now();
    const rec = quoteRecord(row);
    const currency = row.premium_currency ?? current!.plan.currency;
    const premium = { amount: req.premium !== '' ? req.premium : (row.premium_amount ?? '0.00'), currency };
    const claims = offerTerms({ ...rec, premium, validUntil: new Date(now.getTime() + validDays * DAY_MS).toISOString() });
    return { quote: toQuote(row), decided: false, offerClaimsJson: JSON.stringify(claims) };
  };

  const DecideQuote = async (req: DecideQuoteRequest__Output) => {
    const owner = decisionOwner(req.owner);
    const outcome = checkOutcome(req.outcome);
    if (req.decidedBy === '') throw new DomainError('validation_error', 'decided_by is required');
    const out = await withTx(pool, async (c) => {
      if (req.jobId !== '') {
        const mine = await quoteDecidedByJob(c, req.jobId);
        if (mine) return { row: mine, event: undefined };
      }
      const row = await lockQuote(c, owner, req.quoteId);
      if (!row) throw notFound('quote');
      if (row.status !== 'referred') throw notReferred(row);
      let approved;
      if (outcome === 'approved') {
        const claims = JSON.parse(req.offerClaimsJson) as ReturnType<typeof offerTerms>;
        if (claims.quoteId !== row.quote_id || !/^[0-9a-f]{64}$/.test(req.offerSha256) || req.offerJws === '') {
          throw new DomainError('validation_error', 'an approval needs the signed offer of this quote');
        }
        approved = { premium: claims.premium, validUntil: new Date(claims.validUntil), offer: { jws: req.offerJws, sha256: req.offerSha256 } };
      }
      return recordDecision(c, names, {
        quoteId: row.quote_id,
        outcome,
        note: req.note === '' ? null : req.note,
        decidedAt: wallClock.now(),
        decidedBy: req.decidedBy,
        jobId: req.jobId === '' ? null : req.jobId,
        ...(approved ? { approved } : { declineCode: req.reason || UNDERWRITER_DECLINED }),
      });
    }).catch(dbError);
    if (out.event) d.published([out.event]);
    return { quote: toQuote(out.row) };
  };

  return { GetQuote, ListQuotes, GetJobQuotes, GetRatingPlan, RateQuotes, CreateQuotes, PrepareDecision, DecideQuote };
}
