// What each job kind does. A handler returns the job's result, throws JobFailed for an outcome the
// job must settle with (a business rule said no), and lets anything else (a dependency down)
// propagate, which makes the message be delivered again later. Effects are idempotent by job id.
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { clockAt, wallClock } from '@partner/shared/domain/clock';
import { DomainError } from '@partner/shared/domain/errors';
import { applicantToMessage, type Applicant } from '@partner/shared/domain/applicant';
import { parseSandbox } from '@partner/shared/domain/sandbox';
import { checkSubmission, passesGenericRules, utcToday } from '@partner/shared/domain/submission-rules';
import { attachmentHandlers } from './attachments.js';
import { webhookHandlers } from './webhooks.js';
import { withdrawHandlers } from './withdraw.js';
import { bindHandlers } from './bind.js';
import { clockHandlers } from './clocks.js';
import { quoteHandlers } from './quotes.js';
import { submissionRecord } from '@partner/shared/domain/submission-record';
import { failOnRefusal, JobFailed, jobScope, type Handler } from './handler-contract.js';

export { deterministicFailure, JobFailed, type Handler, type HandlerContext, type JobToRun } from './handler-contract.js';

interface SubmissionPayload {
  externalRef: string;
  submissionType: string;
  effectiveDate: string;
  productId: string;
  applicant: Applicant;
  /** Product-defined risk data (API.md "Risk data"), judged by the product's risk schema below. */
  risk?: Record<string, unknown>;
  /** Hex SHA-256 of the body's RFC 8785 form as the partner sent it (the gateway's; absent in jobs queued before receipts). */
  contentSha256?: string;
  /** UAT: the partner's test clock the submission lives on (issue 44). */
  testClockId?: string;
}

/**
 * The day the create job judges the requirements' effective-date window on: the submission's test
 * clock's (issue 44), else the wall clock's. A clock that is not the partner's (or deleted) fails the
 * job 422 unknown_test_clock.
 */
async function todayOf(job: Parameters<Handler>[0], p: SubmissionPayload, ctx: Parameters<Handler>[2]): Promise<string> {
  if (!p.testClockId) return utcToday(wallClock);
  const clock = await ctx.clients.policy.GetTestClock({ owner: jobScope(job).owner, testClockId: p.testClockId }).catch((err: unknown) => {
    if (err instanceof DomainError && err.code === 'not_found') {
      throw new JobFailed({ code: 'unknown_test_clock', message: `testClockId ${p.testClockId} names no test clock of this partner`, retryable: false });
    }
    throw err;
  });
  return utcToday(clockAt(new Date(clock.testClock!.frozenTime)));
}

const createSubmission: Handler = async (job, payload, ctx) => {
  const p = payload as SubmissionPayload;
  // UAT sandbox directives (README.md "Sandbox directives (UAT only)"): the gateway has refused malformed ones; the delay comes first,
  // then the forced failure, answered with the error table's retryable like a real one.
  const directive = ctx.sandbox ? parseSandbox(p.externalRef) : undefined;
  if (directive?.delayS) await ctx.sleep(directive.delayS * 1000);
  if (directive?.fail) {
    throw new JobFailed({
      code: directive.fail.code,
      message: `sandbox failure requested by externalRef (${directive.fail.code})`,
      retryable: directive.fail.retryable,
    });
  }

  // A refusal below is final only if this job has not created its submission already: a delivery
  // whose effect committed before the job could settle comes back, maybe after the product changed or
  // the day turned; it must answer with what it created (CreateSubmission returns it), not fail.
  const createdBefore = async (): Promise<boolean> =>
    ctx.clients.submission.GetSubmission(jobScope(job)).then(
      () => true,
      (err: unknown) => {
        if (err instanceof DomainError && err.code === 'not_found') return false;
        throw err;
      },
    );
  const product = await ctx.product(p.productId);
  const unknown = !product?.active;
  // The product's requirements, judged by the one rule set POST /v1/submissions/validate uses, on the
  // day (UTC) the job runs; the submission records the version that judged it.
  // The body is the payload without what the gateway carries beside it (the receipt's content hash).
  const { contentSha256: _hash, testClockId: _clock, ...body } = p;
  const today = await todayOf(job, p, ctx);
  const broken = unknown ? [] : passesGenericRules(body) ? checkSubmission(body, product, { today, sandbox: false }) : [];
  const again = (unknown || broken.length > 0) && (await createdBefore());
  if (unknown && !again) {
    throw new JobFailed({ code: 'unknown_product', message: `product ${p.productId} does not exist or is not offered`, retryable: false });
  }
  if (broken.length > 0 && !again) {
    throw new JobFailed({
      code: 'requirements_not_met',
      message: `the submission does not meet the requirements of product ${p.productId} (version ${product?.requirementsVersion}): ${broken.map((e) => e.field).join(', ')}`,
      retryable: false,
      detailsJson: JSON.stringify(broken.map((e) => ({ field: e.field, issue: e.message, code: e.code }))),
    });
  }
  const created = await ctx.clients.submission.CreateSubmission({
    ...jobScope(job),
    principalId: job.caller.principalId,
    externalRef: p.externalRef,
    submissionType: p.submissionType,
    effectiveDate: p.effectiveDate,
    productId: p.productId,
    applicant: applicantToMessage(p.applicant),
    requirementsVersion: product?.requirementsVersion ?? 0,
    attachmentRulesJson: JSON.stringify(product?.requirements.attachments ?? []),
    riskJson: p.risk === undefined ? '' : JSON.stringify(p.risk),
    contentSha256: p.contentSha256 ?? '',
    receivedAt: job.createdAt,
    testClockId: p.testClockId ?? '',
  }).catch(failOnRefusal);
  const { submission, receipt } = created;
  // The submission as GET /v1/submissions/{id} shows it (its requirements: what is still due), and its
  // receipt: a partner needs no second request to learn what to upload.
  return { ...submissionRecord(submission!), ...(receipt ? { receipt } : {}) };
};

export const HANDLERS: Record<string, Handler> = {
  [JOB_KINDS.submissionCreate]: createSubmission,
  ...attachmentHandlers,
  ...webhookHandlers,
  ...withdrawHandlers,
  ...bindHandlers,
  ...clockHandlers,
  ...quoteHandlers,
};
