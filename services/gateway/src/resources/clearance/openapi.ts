// OpenAPI pieces of clearance and withdrawal (docs/api.md "Clearance"): the clearance and withdrawal
// objects every submission shows, the withdraw body (the very schema the route validates with), and
// the withdraw operation.
import { CLEARANCE_BASES, CLEARANCE_STATUSES, WITHDRAWAL_NOTE_MAX, WITHDRAWAL_REASONS } from '@partner/shared/domain/clearance';
import { MUTATION_DESCRIPTION, mutationResponses, param, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';
import { submissionWithdrawSchema } from './routes.js';

export const CLEARANCE_DESCRIPTION =
  'Whether this submission holds its risk. A carrier takes a risk from one partner only, the first to submit it: within one tenant and ' +
  'product, effective dates within 60 days, the same `taxId` (basis `tax_id`), else the same normalized legal name with the same ' +
  '`country` and `postalCode` (`name_address`), else the same normalized name (`name_only`). `cleared`: no earlier live (not withdrawn) ' +
  'submission of the risk; `duplicate`: an earlier live one of your own (`duplicateOf`); `blocked`: an earlier live one of another partner ' +
  '(`tax_id` or `name_address`); `review`: a `name_only` match with another partner, which a person decides. Nothing about another ' +
  "partner's submission is ever shown: `blocked` and `review` carry only `basis`. When the submission holding a risk is withdrawn, the " +
  'earliest blocked one becomes `cleared` (`submission.clearance_changed`).';

export const clearanceSchemas: Record<string, Schema> = {
  Clearance: {
    type: 'object',
    description: CLEARANCE_DESCRIPTION,
    additionalProperties: false,
    required: ['status', 'basis', 'decidedAt'],
    properties: {
      status: { type: 'string', enum: [...CLEARANCE_STATUSES] },
      basis: { type: ['string', 'null'], enum: [...CLEARANCE_BASES, null], description: 'How the risk matched; null when `cleared`.' },
      duplicateOf: { ...ref('Uuid'), description: 'Only for `duplicate`: your own earlier submission of the risk.' },
      decidedAt: ref('Timestamp'),
    },
    examples: [
      { status: 'cleared', basis: null, decidedAt: '2026-11-21T12:00:08.012Z' },
      { status: 'blocked', basis: 'tax_id', decidedAt: '2026-11-21T12:00:08.012Z' },
    ],
  },
  Withdrawal: {
    type: 'object',
    description: 'Present once the submission is withdrawn.',
    additionalProperties: false,
    required: ['reason', 'withdrawnAt'],
    properties: {
      reason: { type: 'string', enum: [...WITHDRAWAL_REASONS] },
      note: { type: 'string', maxLength: WITHDRAWAL_NOTE_MAX },
      withdrawnAt: ref('Timestamp'),
    },
  },
  SubmissionWithdraw: {
    ...submissionWithdrawSchema,
    description: 'Why the submission is withdrawn. Unknown fields are refused (400 naming them).',
    properties: {
      reason: { ...submissionWithdrawSchema.properties.reason, examples: ['applicant_withdrew'] },
      note: { ...submissionWithdrawSchema.properties.note, description: `Free text, 1–${WITHDRAWAL_NOTE_MAX} characters.`, examples: ['The insured placed the risk elsewhere.'] },
    },
  },
};

export function clearancePaths(): Obj {
  return {
    '/v1/submissions/{submissionId}/withdraw': {
      parameters: [param('SubmissionId')],
      post: {
        operationId: 'withdrawSubmission',
        tags: ['Submissions'],
        summary: 'Withdraw a submission',
        description:
          'Takes a submission back. The job\'s result is the submission with `status: "withdrawn"` and `withdrawal`; ' +
          '`submission.withdrawn` is emitted. A withdrawn submission stops holding its risk (see `Clearance`). Withdrawing a withdrawn ' +
          'submission fails the job with 409 `not_withdrawable`; so does adding an attachment to one (its attachments can still be read). ' +
          "Another partner's submission is 404 at once. A `reason` outside the enum, a `note` over 500 characters or an unknown field is " +
          `400 naming each. ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), param('PrincipalId')],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('SubmissionWithdraw'), examples: { withdraw: { value: { reason: 'applicant_withdrew', note: 'Placed elsewhere.' } } } } },
        },
        responses: mutationResponses(ref('Submission'), 'The withdrawn submission.', [413, 415]),
      },
    },
  };
}

/** The `clearance` filter of the submission list. */
export const clearanceListParam = {
  name: 'clearance',
  in: 'query',
  description: 'Only submissions with this clearance status (e.g. `blocked`).',
  schema: { type: 'string', enum: [...CLEARANCE_STATUSES] },
};

