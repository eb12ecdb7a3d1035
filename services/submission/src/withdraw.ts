// WithdrawSubmission (job submission.withdraw): checks the request, withdraws under the risk's locks
// (clearance.ts) and publishes the events it recorded once the transaction has committed.
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { isJobId, isUuid } from '@partner/shared/domain/ids';
import { dbError, type Pool } from '@partner/shared/db/pg';
import { WITHDRAWAL_NOTE_MAX, WITHDRAWAL_REASONS, type WithdrawalReason } from '@partner/shared/domain/clearance';
import type { natsNames } from '@partner/shared/nats/client';
import type { OutboxRelay } from '@partner/shared/nats/outbox-relay';
import type { WithdrawSubmissionRequest__Output } from '@partner/shared/generated/partner/submission/v1/WithdrawSubmissionRequest';
import type { WithdrawSubmissionResponse } from '@partner/shared/generated/partner/submission/v1/WithdrawSubmissionResponse';
import { withdrawSubmission } from './clearance.js';
import type { ClearanceMetrics } from './clearance-metrics.js';
import { toProto } from './submission-row.js';

export function withdrawRpc(deps: {
  pool: Pool;
  names: ReturnType<typeof natsNames>;
  events: OutboxRelay;
  metrics: ClearanceMetrics;
}): (req: WithdrawSubmissionRequest__Output) => Promise<WithdrawSubmissionResponse> {
  return async (req) => {
    if (!isJobId(req.jobId) || !req.owner?.tenantId || !req.owner.partnerId) {
      throw new DomainError('validation_error', 'job_id and owner are required');
    }
    if (!isUuid(req.submissionId)) throw notFound('submission');
    const details: ErrorDetail[] = [];
    if (!(WITHDRAWAL_REASONS as readonly string[]).includes(req.reason)) details.push({ field: 'reason', issue: `must be one of ${WITHDRAWAL_REASONS.join(', ')}` });
    if ([...req.note].length > WITHDRAWAL_NOTE_MAX) details.push({ field: 'note', issue: `must be at most ${WITHDRAWAL_NOTE_MAX} characters` });
    if (details.length > 0) throw new DomainError('validation_error', 'the withdrawal is invalid; see details', { details });
    const out = await withdrawSubmission(deps.pool, deps.names, {
      jobId: req.jobId,
      owner: { tenantId: req.owner.tenantId, partnerId: req.owner.partnerId },
      submissionId: req.submissionId.toLowerCase(),
      reason: req.reason as WithdrawalReason,
      note: req.note === '' ? null : req.note,
    }).catch(dbError);
    for (const e of out.events) deps.events.publishNow(e.outboxId, e);
    if (out.released) deps.metrics.released(out.released);
    return { submission: toProto(out.row) };
  };
}
