// Jobs quote.create and quote.decide (API.md "Quotes, underwriting referrals, bind and issue").
//
// quote.create, as idempotent steps keyed by the job id: (1) the quotes this job created already, if
// any, are the answer (a redelivery never rates twice, nor refuses what it did); (2) the submission,
// read from the submission service, must be quotable: not withdrawn or bound (409 not_quotable naming
// `status`), cleared (naming `clearance.status`), nothing currently due (422 requirements_not_met);
// (3) the options are rated here with the product's current rating plan, read from the policy service
// and kept (rating-plans.ts; 422 product_not_rated, option_not_offered); (4) the submission service
// signs each open quote's offer with the receipt keys; (5) the policy service stores the quotes and
// supersedes the earlier ones in one transaction, once per job id, only when they were rated with the
// product's current plan (else the plan is read again and step 3 runs again). No quote exists before
// every refusal has been checked.
//
// quote.decide (UAT: a partner plays the underwriter): the same two steps as the operator's command,
// prepare (the terms an approval offers) → sign → record; a redelivery answers with the quote it decided.
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { clockTimeOf } from './clocks.js';
import { submissionRecord } from '@partner/shared/domain/submission-record';
import type { QuoteRecord } from '@partner/shared/domain/quotes';
import { DomainError } from '@partner/shared/domain/errors';
import { newUuid } from '@partner/shared/domain/ids';
import { rateOptions, type CurrentRatingPlan, type RatedQuote } from '@partner/shared/domain/rating';
import { clockOfTime } from '@partner/shared/domain/clock';
import { failOnRefusal, JobFailed, jobScope, type Handler, type HandlerContext, type JobToRun } from './handler-contract.js';

interface CreatePayload {
  submissionId: string;
  options: { limit: string; retention: string }[];
}

interface DecidePayload {
  quoteId: string;
  outcome: 'approved' | 'declined';
  premium?: string;
  note?: string;
}

const records = (quotes: { recordJson: string }[]): QuoteRecord[] => quotes.map((q) => JSON.parse(q.recordJson) as QuoteRecord);

/** Why a submission (as GET shows it) cannot be quoted, in the contract's order; undefined when it can. */
export function quoteRefusal(s: { status: string; clearance: { status: string }; requirements: { currentlyDue: unknown[] } }): JobFailed | undefined {
  if (s.status === 'withdrawn' || s.status === 'bound') {
    return new JobFailed({
      code: 'not_quotable',
      message: `the submission is ${s.status}: it cannot be quoted`,
      retryable: false,
      detailsJson: JSON.stringify([{ field: 'status', issue: `is ${s.status}` }]),
    });
  }
  if (s.clearance.status !== 'cleared') {
    return new JobFailed({
      code: 'not_quotable',
      message: `the submission's clearance is ${s.clearance.status}, not cleared: it cannot be quoted`,
      retryable: false,
      detailsJson: JSON.stringify([{ field: 'clearance.status', issue: `is ${s.clearance.status}, not cleared` }]),
    });
  }
  if (s.requirements.currentlyDue.length > 0) {
    return new JobFailed({
      code: 'requirements_not_met',
      message: 'the submission does not meet its product\'s requirements yet: requirements.currentlyDue is not empty',
      retryable: false,
      detailsJson: JSON.stringify([{ field: 'requirements.currentlyDue', issue: `${s.requirements.currentlyDue.length} still due` }]),
    });
  }
  return undefined;
}

/** Rates with a plan the worker may keep for a while: how often a job reads it again before its delivery is retried. */
const PLAN_ATTEMPTS = 3;

/** The options rated (shared/domain/rating.ts): option_not_offered fails the job, naming each part. */
function rateWith(current: CurrentRatingPlan, record: Record<string, unknown>, options: CreatePayload['options'], now: Date): RatedQuote[] {
  try {
    return rateOptions(current, record, options, now, newUuid);
  } catch (err) {
    return failOnRefusal(err);
  }
}

async function sign(ctx: HandlerContext, job: JobToRun, claims: unknown): Promise<{ jws: string; sha256: string }> {
  const { jws, sha256 } = await ctx.clients.submission.SignOffer({ owner: jobScope(job).owner, claimsJson: JSON.stringify(claims) }).catch(failOnRefusal);
  return { jws, sha256 };
}

const createQuotes: Handler = async (job, payload, ctx) => {
  const p = payload as CreatePayload;
  const scope = jobScope(job);
  // Steps 1 and 2 read in parallel (one round trip): the submission is only judged when the job made no quotes.
  const [done, read] = await Promise.allSettled([
    ctx.clients.policy.GetJobQuotes({ owner: scope.owner, jobId: job.id }),
    ctx.clients.submission.GetSubmission({ owner: scope.owner, submissionId: p.submissionId }),
  ]);
  if (done.status === 'rejected') throw done.reason;
  if (done.value.quotes.length > 0) return { submissionId: p.submissionId, quotes: records(done.value.quotes) };
  if (read.status === 'rejected') failOnRefusal(read.reason);
  const { submission } = read.value;
  const record = submissionRecord(submission!) as Parameters<typeof quoteRefusal>[0] & { submissionId: string; productId: string };
  const refusal = quoteRefusal(record);
  if (refusal) throw refusal;

  // The submission's test clock (issue 44): validUntil and dueBy count from its time. The product's
  // plan is read beside it, once per worker (rating-plans.ts); its refusal comes after the clock's.
  const testClockId = (record as { testClockId?: string }).testClockId ?? '';
  const [clock, plan] = await Promise.allSettled([clockTimeOf(ctx, scope.owner, testClockId), ctx.ratingPlans(record.productId)]);
  if (clock.status === 'rejected') throw clock.reason;
  const now = clockOfTime(clock.value).now();
  let current = plan.status === 'fulfilled' ? plan.value : failOnRefusal(plan.reason);
  for (let attempt = 1; ; attempt += 1) {
    const quotes = rateWith(current, record as unknown as Record<string, unknown>, p.options, now);
    // Each open quote's offer, signed at once (one round trip however many options were asked for).
    await Promise.all(
      quotes.map(async (q) => {
        if (q.status !== 'open' || !q.premium || !q.validUntil) return;
        q.offer = await sign(ctx, job, {
          quoteId: q.quoteId,
          submissionId: record.submissionId,
          productId: record.productId,
          option: q.option,
          premium: q.premium,
          validUntil: q.validUntil,
          ratingVersion: current.ratingVersion,
        });
      }),
    );
    try {
      const created = await ctx.clients.policy.CreateQuotes({
        owner: scope.owner,
        jobId: job.id,
        submissionId: record.submissionId,
        productId: record.productId,
        ratingVersion: current.ratingVersion,
        testClockId,
        quotesJson: JSON.stringify(quotes),
      });
      return { submissionId: record.submissionId, quotes: records(created.quotes) };
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'rating_plan_changed')) failOnRefusal(err);
      // The plan kept here was replaced (`product rating set`): read the current one and rate again.
      ctx.ratingPlans.forget(record.productId, current.ratingVersion);
      // A plan replaced again and again while this job rates: the delivery is retried later.
      if (attempt >= PLAN_ATTEMPTS) throw new DomainError('unavailable', `${err.message}, ${PLAN_ATTEMPTS} times in a row`, { retryable: true });
      current = await ctx.ratingPlans(record.productId).catch(failOnRefusal);
    }
  }
};

const decideQuote: Handler = async (job, payload, ctx) => {
  const p = payload as DecidePayload;
  // A test helper: production has no such path, and its worker does not decide for a partner either.
  if (!ctx.sandbox) throw new JobFailed({ code: 'not_found', message: 'not found', retryable: false });
  const scope = jobScope(job);
  // An approval's new validUntil counts from the quote's test clock (issue 44), if it has one.
  const { quote } = await ctx.clients.policy.GetQuote({ owner: scope.owner, quoteId: p.quoteId }).catch(failOnRefusal);
  const clockTime = await clockTimeOf(ctx, scope.owner, (JSON.parse(quote!.recordJson) as QuoteRecord).testClockId);
  const prepared = await ctx.clients.policy
    .PrepareDecision({ owner: scope.owner, quoteId: p.quoteId, outcome: p.outcome, premium: p.premium ?? '', jobId: job.id, clockTime })
    .catch(failOnRefusal);
  if (prepared.decided) return JSON.parse(prepared.quote!.recordJson) as QuoteRecord;
  const offer = prepared.offerClaimsJson !== '' ? await sign(ctx, job, JSON.parse(prepared.offerClaimsJson)) : undefined;
  const decided = await ctx.clients.policy
    .DecideQuote({
      owner: scope.owner,
      quoteId: p.quoteId,
      outcome: p.outcome,
      note: p.note ?? '',
      decidedBy: `partner:${job.caller.partnerId}${job.caller.principalId ? `/${job.caller.principalId}` : ''}`,
      jobId: job.id,
      offerClaimsJson: prepared.offerClaimsJson,
      offerJws: offer?.jws ?? '',
      offerSha256: offer?.sha256 ?? '',
      reason: '',
    })
    .catch(failOnRefusal);
  return JSON.parse(decided.quote!.recordJson) as QuoteRecord;
};

export const quoteHandlers: Record<string, Handler> = {
  [JOB_KINDS.quoteCreate]: createQuotes,
  [JOB_KINDS.quoteDecide]: decideQuote,
};
