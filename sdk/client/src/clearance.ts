// Clearance and withdrawal (docs/api.md "Clearance"): the types a submission carries, by the names the
// SDK exports (the wire types are generated from the OpenAPI document, wire-types.ts). Withdrawing is
// a submission's operation (submissions.ts).
import type { Clearance, Submission, Withdrawal } from './wire-types.js';

export type { Clearance, SubmissionWithdraw, Withdrawal } from './wire-types.js';

/** `cleared` (it holds its risk), `duplicate` (of your own earlier one), `blocked` (another partner holds it), `review` (a person decides). */
export type ClearanceStatus = Clearance['status'];
export type ClearanceBasis = NonNullable<Clearance['basis']>;
export type WithdrawalReason = Withdrawal['reason'];
export type SubmissionStatus = Submission['status'];
