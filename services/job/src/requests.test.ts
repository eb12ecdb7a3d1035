import { describe, expect, it } from 'vitest';
import { DomainError } from '@partner/shared/domain/errors';
import { checkSubmit, settlementEvent, settleOutcomeOf } from './requests.js';
import type { JobRow } from './repo.js';

const JOB = 'job_0123456789abcdef0123456789abcdef';
const submit = (over: Record<string, unknown> = {}) =>
  ({
    jobId: JOB,
    kind: 'submission.create',
    caller: { tenantId: 't', partnerId: 'p', clientId: 'c', principalId: '' },
    payloadJson: '{"a":1}',
    idempotency: null,
    ...over,
  }) as never;
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof DomainError ? `${err.code}: ${err.message}` : String(err);
  }
  return 'accepted';
};

describe('SubmitJob requests', () => {
  it('takes a well-formed job, with its key when it has one', () => {
    expect(checkSubmit(submit())).toEqual({ caller: { tenantId: 't', partnerId: 'p', clientId: 'c', principalId: '' } });
    expect(checkSubmit(submit({ idempotency: { key: 'k', scope: 'POST /v1/submissions', fingerprint: 'f' } })).idempotency).toEqual({
      key: 'k',
      scope: 'POST /v1/submissions',
      fingerprint: 'f',
    });
    // An empty key is no key.
    expect(checkSubmit(submit({ idempotency: { key: '', scope: 's', fingerprint: 'f' } })).idempotency).toBeUndefined();
  });

  it('refuses a bad id, an unknown kind, a missing caller and a payload that is not JSON', () => {
    expect(refusal(() => checkSubmit(submit({ jobId: 'job_1' })))).toBe('validation_error: job_id must be job_<32 hex>');
    expect(refusal(() => checkSubmit(submit({ kind: 'policy.delete' })))).toBe('validation_error: unknown job kind policy.delete');
    expect(refusal(() => checkSubmit(submit({ caller: { tenantId: 't', partnerId: '', clientId: 'c' } })))).toBe('validation_error: caller is required');
    expect(refusal(() => checkSubmit(submit({ payloadJson: '{' })))).toBe('validation_error: payload_json is not JSON');
  });
});

describe('SettleJob requests', () => {
  it('takes a JSON result or an error with a code, nothing else', () => {
    expect(settleOutcomeOf({ outcome: 'resultJson', resultJson: '{"ok":true}' } as never)).toEqual({ resultJson: '{"ok":true}' });
    const error = { code: 'conflict', message: 'no', retryable: false };
    expect(settleOutcomeOf({ outcome: 'error', error } as never)).toEqual({ error });
    expect(refusal(() => settleOutcomeOf({ outcome: 'resultJson', resultJson: 'nope' } as never))).toBe('validation_error: result_json is not JSON');
    expect(refusal(() => settleOutcomeOf({ outcome: 'error', error: { code: '' } } as never))).toBe('validation_error: a result or an error is required');
    expect(refusal(() => settleOutcomeOf({} as never))).toBe('validation_error: a result or an error is required');
  });
});

describe('the settlement event', () => {
  const row = (over: Partial<JobRow>): JobRow => ({
    job_id: JOB,
    kind: 'submission.create',
    tenant_id: 't',
    partner_id: 'p',
    client_id: 'c',
    principal_id: null,
    status: 'succeeded',
    result: { submissionId: 's' },
    error: null,
    deliveries: 1,
    created_at: new Date('2026-11-21T12:00:00.000Z'),
    updated_at: new Date('2026-11-21T12:00:01.500Z'),
    ...over,
  });

  it('shows the job as GET /v1/jobs/{id} does, for its partner', () => {
    expect(settlementEvent(row({}))).toEqual({
      job: { id: JOB, kind: 'submission.create', status: 'succeeded', result: { submissionId: 's' }, createdAt: '2026-11-21T12:00:00.000Z', updatedAt: '2026-11-21T12:00:01.500Z' },
      tenantId: 't',
      partnerId: 'p',
    });
    const error = { code: 'unknown_product', message: 'no such product', retryable: false };
    expect(settlementEvent(row({ status: 'failed', result: null, error })).job).toEqual(expect.objectContaining({ status: 'failed', error }));
    expect(settlementEvent(row({ status: 'failed', result: null, error })).job).not.toHaveProperty('result');
  });
});
