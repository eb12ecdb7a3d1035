// Job quote.bind (API.md "Quotes…", bind; DESIGN.md "From a submission to a policy"): idempotent
// steps keyed by the job id, so a redelivered or retried job (a worker killed between any two)
// issues nothing twice and ends as the first attempt would have:
//   1. policy.CheckBind: the quote's checks in the contract's order (quote_not_open, offer_changed);
//      answers this job's policy when it issued one already.
//   2. submission.ReserveBind: under the risk's locks the submission is taken for this job (a withdraw
//      meets it there: not_quotable when withdrawn; quote_not_open when another bind holds it), with
//      the bind.received receipt.
//   3. policy.BindQuote, with the insured and effective date of the submission step 2 answered with:
//      in one transaction the quote bound, its siblings not_taken, the policy and its declarations PDF
//      issued (quote.updated, policy.issued). A refusal here (the quote lapsed since step 1) releases
//      the reservation before the job fails.
//   4. submission.CompleteBind: the submission bound (submission.updated) with the policy.issued receipt.
// The job's result is the policy as GET /v1/policies/{id} shows it.
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { DomainError } from '@partner/shared/domain/errors';
import type { Policy__Output } from '@partner/shared/generated/partner/policy/v1/Policy';
import type { PolicyDocument__Output } from '@partner/shared/generated/partner/policy/v1/PolicyDocument';
import { policyRecordOf } from '@partner/shared/domain/policies';
import { failOnRefusal, jobScope, type Handler } from './handler-contract.js';

interface BindPayload {
  quoteId: string;
  offerSha256: string;
}

const bindQuote: Handler = async (job, payload, ctx) => {
  const p = payload as BindPayload;
  const scope = jobScope(job);
  const checked = await ctx.clients.policy.CheckBind({ ...scope, quoteId: p.quoteId, offerSha256: p.offerSha256 }).catch(failOnRefusal);
  const submissionId = checked.submissionId;
  // The reservation answers with the submission it took (read under its locks): the policy's insured
  // and effective date come from it, with no read of their own.
  const { submission } = await ctx.clients.submission
    .ReserveBind({ ...scope, submissionId, quoteId: p.quoteId, offerSha256: p.offerSha256, receivedAt: job.createdAt })
    .catch(failOnRefusal);
  let policy: Policy__Output | null = checked.policy;
  let documents: PolicyDocument__Output[] = checked.documents;
  if (!policy) {
    const issued = await ctx.clients.policy
      .BindQuote({
        ...scope,
        quoteId: p.quoteId,
        offerSha256: p.offerSha256,
        insuredLegalName: submission!.applicant?.legalName ?? '',
        effectiveDate: submission!.effectiveDate,
      })
      .catch(async (err: unknown) => {
        // The quote refused after the reservation: give the submission back, then fail as refused.
        if (err instanceof DomainError && !err.retryable) await ctx.clients.submission.ReleaseBind({ ...scope, submissionId });
        return failOnRefusal(err);
      });
    policy = issued.policy;
    documents = issued.documents;
  }
  await ctx.clients.submission
    .CompleteBind({
      ...scope,
      submissionId,
      policyId: policy!.policyId,
      policyNumber: policy!.policyNumber,
      documents: documents.map((d) => ({ documentId: d.documentId, sha256: d.sha256 })),
      receivedAt: job.createdAt,
    })
    .catch(failOnRefusal);
  return policyRecordOf(policy!);
};

export const bindHandlers: Record<string, Handler> = { [JOB_KINDS.quoteBind]: bindQuote };
