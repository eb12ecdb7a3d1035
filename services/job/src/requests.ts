// The job service's requests checked and turned into what repo.ts takes, and the settlement event a
// settled job announces: the pure parts of the handlers in app.ts (unit-tested in requests.test.ts).
import { DomainError } from '@partner/shared/domain/errors';
import { isJobId } from '@partner/shared/domain/ids';
import { hasError, JOB_KINDS, type JobCaller, type SettlementEvent } from '@partner/shared/domain/jobs';
import type { SubmitJobRequest__Output } from '@partner/shared/generated/partner/job/v1/SubmitJobRequest';
import type { SettleJobRequest__Output } from '@partner/shared/generated/partner/job/v1/SettleJobRequest';
import type { JobRow } from './repo.js';

const KINDS = new Set<string>(Object.values(JOB_KINDS));

export type SettleOutcome = { resultJson: string } | { error: { code: string; message: string; retryable: boolean } };

/** A SubmitJob request, checked: its caller, and its idempotency when it carries a key. */
export function checkSubmit(req: SubmitJobRequest__Output): { caller: JobCaller; idempotency?: { key: string; scope: string; fingerprint: string } } {
  const caller = req.caller;
  if (!isJobId(req.jobId)) throw new DomainError('validation_error', 'job_id must be job_<32 hex>');
  if (!KINDS.has(req.kind)) throw new DomainError('validation_error', `unknown job kind ${req.kind}`);
  if (!caller?.tenantId || !caller.partnerId || !caller.clientId) throw new DomainError('validation_error', 'caller is required');
  try {
    JSON.parse(req.payloadJson);
  } catch {
    throw new DomainError('validation_error', 'payload_json is not JSON');
  }
  const idem = req.idempotency?.key ? req.idempotency : undefined;
  return {
    caller: { tenantId: caller.tenantId, partnerId: caller.partnerId, clientId: caller.clientId, principalId: caller.principalId },
    ...(idem ? { idempotency: { key: idem.key, scope: idem.scope, fingerprint: idem.fingerprint } } : {}),
  };
}

/** A SettleJob request's outcome: a result that is JSON, or an error with a code. */
export function settleOutcomeOf(req: SettleJobRequest__Output): SettleOutcome {
  if (req.outcome === 'resultJson') {
    try {
      JSON.parse(req.resultJson ?? '');
    } catch {
      throw new DomainError('validation_error', 'result_json is not JSON');
    }
    return { resultJson: req.resultJson! };
  }
  if (req.outcome === 'error' && req.error?.code) return { error: req.error };
  throw new DomainError('validation_error', 'a result or an error is required');
}

/** What every gateway hears when a job settles (core NATS): the job as GET /v1/jobs/{id} shows it. */
export function settlementEvent(row: JobRow): SettlementEvent {
  return {
    job: {
      id: row.job_id,
      kind: row.kind,
      status: row.status,
      ...(row.status === 'succeeded' ? { result: row.result } : {}),
      ...(hasError(row.status) && row.error ? { error: row.error } : {}),
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    },
    tenantId: row.tenant_id,
    partnerId: row.partner_id,
  };
}
