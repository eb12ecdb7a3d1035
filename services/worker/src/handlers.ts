// What each job kind does. A handler returns the job's result, throws JobFailed for an outcome the
// job must settle with (a business rule said no), and lets anything else (a dependency down)
// propagate, which makes the message be delivered again later. Effects are idempotent by job id.
import { JOB_KINDS } from '@partner/shared/jobs';
import { attachmentHandlers } from './attachments.js';
import { failOnRefusal, JobFailed, ownerOf, type Handler } from './handler.js';

export { JobFailed, type Handler, type HandlerContext, type JobToRun } from './handler.js';

interface SubmissionPayload {
  externalRef: string;
  submissionType: string;
  effectiveDate: string;
  productId: string;
  applicant: { legalName: string };
}

/**
 * UAT sandbox directives (documented in README): `sandbox:delay=<1..60>` makes the job take that
 * many seconds before it succeeds; `sandbox:fail=<code>` fails it with that code (retryable only
 * for `unavailable`). Anything else is an ordinary reference.
 */
export function sandboxDirective(externalRef: string): { delayS: number } | { failCode: string } | undefined {
  const delay = /^sandbox:delay=(\d{1,2})$/.exec(externalRef);
  if (delay) {
    const s = Number(delay[1]);
    return s >= 1 && s <= 60 ? { delayS: s } : undefined;
  }
  const fail = /^sandbox:fail=([a-z][a-z0-9_]{0,63})$/.exec(externalRef);
  // Authentication codes answer with a challenge a job cannot give: not something a job fails with.
  if (!fail || ['unauthenticated', 'invalid_token', 'insufficient_scope'].includes(fail[1]!)) return undefined;
  return { failCode: fail[1]! };
}

const createSubmission: Handler = async (job, payload, ctx) => {
  const p = payload as SubmissionPayload;
  const directive = ctx.sandbox ? sandboxDirective(p.externalRef) : undefined;
  if (directive && 'failCode' in directive) {
    throw new JobFailed({
      code: directive.failCode,
      message: `sandbox failure requested by externalRef (${directive.failCode})`,
      retryable: directive.failCode === 'unavailable',
    });
  }
  if (directive) await ctx.sleep(directive.delayS * 1000);

  const product = await ctx.product(p.productId);
  if (!product?.active) {
    throw new JobFailed({ code: 'unknown_product', message: `product ${p.productId} does not exist or is not offered`, retryable: false });
  }
  const { submission } = await ctx.clients.submission.CreateSubmission({
    jobId: job.id,
    owner: ownerOf(job),
    principalId: job.caller.principalId,
    externalRef: p.externalRef,
    submissionType: p.submissionType,
    effectiveDate: p.effectiveDate,
    productId: p.productId,
    applicant: { legalName: p.applicant.legalName },
  }).catch(failOnRefusal);
  return { submissionId: submission!.submissionId, submissionName: submission!.submissionName, status: submission!.status };
};

export const HANDLERS: Record<string, Handler> = {
  [JOB_KINDS.submissionCreate]: createSubmission,
  ...attachmentHandlers,
};
