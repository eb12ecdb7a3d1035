// POST /v1/submissions/{id}/withdraw (submissions/write; a job, submission.withdraw): the partner takes
// a submission back. Its result is the submission with status "withdrawn" and `withdrawal`; a
// withdrawn submission stops holding its risk (docs/api.md "Clearance").
import type Router from '@koa/router';
import { isUuid } from '@partner/shared/domain/ids';
import { notFound } from '@partner/shared/domain/errors';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { WITHDRAWAL_NOTE_MAX, WITHDRAWAL_REASONS, type WithdrawalReason } from '@partner/shared/domain/clearance';
import type { GatewayState } from '../../context.js';
import { requireOwn } from '../own.js';
import { readJson } from '../../http/body.js';
import { validator } from '../../http/validate.js';
import { runMutation } from '../../jobs/mutations.js';
import type { RouteDeps } from '../deps.js';

export interface SubmissionWithdraw {
  reason: WithdrawalReason;
  note?: string;
}

export const submissionWithdrawSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['reason'],
  properties: {
    reason: { type: 'string', enum: [...WITHDRAWAL_REASONS] },
    note: { type: 'string', minLength: 1, maxLength: WITHDRAWAL_NOTE_MAX },
  },
} as const;

export function withdrawRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const validate = validator<SubmissionWithdraw>(submissionWithdrawSchema);

  router.post('/submissions/:id/withdraw', deps.guard('submissions/write'), async (ctx) => {
    const raw = ctx.params.id ?? '';
    if (!isUuid(raw)) throw notFound('submission');
    const submissionId = raw.toLowerCase();
    const body = validate(await readJson(ctx, deps.config.jsonLimitBytes));
    // Another partner's submission (or none): 404 at once, nothing queued.
    await requireOwn(ctx, deps, 'submission', submissionId);
    const payload = { submissionId, reason: body.reason, ...(body.note !== undefined ? { note: body.note } : {}) };
    await runMutation(ctx, deps, { kind: JOB_KINDS.submissionWithdraw, payload, ids: { id: submissionId }, fingerprintOf: payload });
  });
}
