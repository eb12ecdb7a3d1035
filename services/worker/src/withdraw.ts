// Job submission.withdraw: the submission service withdraws the submission (and releases its risk)
// under the risk's locks; then the policy service moves its open and referred quotes to not_taken
// (API.md: "not_taken (a sibling was bound, or the submission was withdrawn)"). Both steps are
// idempotent, so a redelivered job redoes what a crash between them left undone. The job's result
// is the submission as GET /v1/submissions/{id} shows it.
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { submissionRecord } from '@partner/shared/domain/submission-record';
import { failOnRefusal, jobScope, type Handler } from './handler-contract.js';

interface WithdrawPayload {
  submissionId: string;
  reason: string;
  note?: string;
}

const withdrawSubmission: Handler = async (job, payload, ctx) => {
  const p = payload as WithdrawPayload;
  const { submission } = await ctx.clients.submission
    .WithdrawSubmission({ ...jobScope(job), submissionId: p.submissionId, reason: p.reason, note: p.note ?? '' })
    .catch(failOnRefusal);
  await ctx.clients.policy.ReleaseSubmissionQuotes({ owner: jobScope(job).owner, submissionId: p.submissionId }).catch(failOnRefusal);
  return submissionRecord(submission!);
};

export const withdrawHandlers: Record<string, Handler> = { [JOB_KINDS.submissionWithdraw]: withdrawSubmission };
