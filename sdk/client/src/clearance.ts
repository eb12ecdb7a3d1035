// Clearance and withdrawal (docs/api.md "Clearance"): the types a submission carries, and
// POST /v1/submissions/{id}/withdraw (a job, like every mutation).
import type { Mutations } from './mutations.js';
import type { MutationOptions } from './options.js';
import { seg, type WithResponse } from './transport.js';
import type { Submission } from './types.js';

/** `cleared` (it holds its risk), `duplicate` (of your own earlier one), `blocked` (another partner holds it), `review` (a person decides). */
export type ClearanceStatus = 'cleared' | 'duplicate' | 'blocked' | 'review';
export type ClearanceBasis = 'tax_id' | 'name_address' | 'name_only';
export type WithdrawalReason = 'duplicate' | 'applicant_withdrew' | 'entered_in_error' | 'other';
export type SubmissionStatus = 'submitted' | 'withdrawn';

/** Whether a submission holds its risk. Nothing about another partner's submission is ever in it. */
export interface Clearance {
  status: ClearanceStatus;
  /** Null when cleared. */
  basis: ClearanceBasis | null;
  /** Only for `duplicate`: your own earlier submission of the risk. */
  duplicateOf?: string;
  decidedAt: string;
}

export interface Withdrawal {
  reason: WithdrawalReason;
  note?: string;
  withdrawnAt: string;
}

export interface SubmissionWithdraw {
  reason: WithdrawalReason;
  /** 1–500 characters. */
  note?: string;
}

/** POST /v1/submissions/{id}/withdraw: resolves with the withdrawn submission once the job has succeeded (409 not_withdrawable when it was withdrawn already). */
export function withdraw(mutations: Mutations, submissionId: string, input: SubmissionWithdraw, opts: MutationOptions): Promise<WithResponse<Submission>> {
  return mutations.mutate<Submission>(() => ({ method: 'POST', path: `/v1/submissions/${seg(submissionId)}/withdraw`, json: input }), opts);
}
