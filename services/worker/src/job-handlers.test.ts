import { NO_REQUIREMENTS } from '@partner/shared/domain/requirements';
import { describe, expect, it } from 'vitest';
describe('the submission handler', () => {
  const job = {
    id: 'job_0123456789abcdef0123456789abcdef',
    kind: 'submission.create',
    caller: { tenantId: 't', partnerId: 'p', clientId: 'c', principalId: '' },
  } as never;
  const payload = (externalRef: string) => ({
    externalRef,
    submissionType: 'application',
    effectiveDate: '2027-01-01',
    productId: '11111111-2222-4333-8444-555555555555',
    applicant: { legalName: 'Acme' },
  });
  const clients = {
    policy: { GetProduct: async () => ({ product: { productId: 'x', name: 'x', active: true } }) },
    submission: {
      // This job has created nothing yet (a first delivery).
      GetSubmission: async () => {
        const { notFound } = await import('@partner/shared/domain/errors');
        throw notFound('submission');
      },
      CreateSubmission: async (req: { externalRef: string }) => ({
        submission: {
          submissionId: 's1',
          submissionName: 'Acme',
          status: 'submitted',
          externalRef: req.externalRef,
          submissionType: 'application',
          effectiveDate: '2027-01-01',
          productId: '11111111-2222-4333-8444-555555555555',
          applicant: { legalName: 'Acme' },
          principalId: '',
          createdAt: '2026-11-21T12:00:08.012Z',
          updatedAt: '2026-11-21T12:00:08.012Z',
          requirements: { version: '1', currentlyDue: ['attachments.loss_run'] },
          clearance: { status: 'cleared', basis: '', decidedAt: '2026-11-21T12:00:08.012Z' },
        },
        receipt: 'eyJ.receipt.jws',
      }),
    },
  } as never;
  const sleep = async () => undefined;
  const product = async () => ({ productId: '11111111-2222-4333-8444-555555555555', active: true, requirementsVersion: 1, requirements: NO_REQUIREMENTS });

  it('honours sandbox directives in UAT', async () => {
    const { HANDLERS, JobFailed } = await import('./job-handlers.js');
    await expect(HANDLERS['submission.create']!(job, payload('sandbox:fail=conflict'), { clients, product, sandbox: true, sleep })).rejects.toBeInstanceOf(JobFailed);
  });

  it('waits, then fails with the error table\'s retryable, for a combined directive', async () => {
    const { HANDLERS } = await import('./job-handlers.js');
    const slept: number[] = [];
    const err = await HANDLERS['submission.create']!(job, payload('sandbox:delay=2;fail=internal'), {
      clients,
      product,
      sandbox: true,
      sleep: async (ms: number) => void slept.push(ms),
    }).catch((e: unknown) => e);
    expect(slept).toEqual([2000]);
    expect(err).toMatchObject({ error: { code: 'internal', retryable: true } });
  });

  it('treats them as ordinary references in production', async () => {
    const { HANDLERS } = await import('./job-handlers.js');
    const result = await HANDLERS['submission.create']!(job, payload('sandbox:fail=conflict'), { clients, product, sandbox: false, sleep });
    // The submission as GET /v1/submissions/{id} shows it (what is still due included), and its receipt.
    expect(result).toEqual({
      submissionId: 's1',
      submissionName: 'Acme',
      status: 'submitted',
      externalRef: 'sandbox:fail=conflict',
      submissionType: 'application',
      effectiveDate: '2027-01-01',
      productId: '11111111-2222-4333-8444-555555555555',
      applicant: { legalName: 'Acme' },
      principalId: null,
      createdAt: '2026-11-21T12:00:08.012Z',
      updatedAt: '2026-11-21T12:00:08.012Z',
      requirements: { version: 1, currentlyDue: ['attachments.loss_run'] },
      clearance: { status: 'cleared', basis: null, decidedAt: '2026-11-21T12:00:08.012Z' },
      risk: null,
      receipt: 'eyJ.receipt.jws',
    });
  });

  it("judges the body by the product's requirements, whatever the gateway carries beside it (the receipt's content hash)", async () => {
    const { HANDLERS } = await import('./job-handlers.js');
    const strict = async () => ({ ...(await product()), requirementsVersion: 2, requirements: { ...NO_REQUIREMENTS, applicant: { required: ['taxId' as const] } } });
    const err = await HANDLERS['submission.create']!(job, { ...payload('ref-1'), contentSha256: 'a'.repeat(64) }, { clients, product: strict, sandbox: false, sleep }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ error: { code: 'requirements_not_met', retryable: false } });
    expect(JSON.parse((err as { error: { detailsJson: string } }).error.detailsJson)).toEqual([expect.objectContaining({ field: 'applicant.taxId' })]);
  });

  it('answers a redelivered job whose submission exists with it, though the product or the day has changed since', async () => {
    const { HANDLERS } = await import('./job-handlers.js');
    const strict = async () => ({ ...(await product()), requirementsVersion: 3, requirements: { ...NO_REQUIREMENTS, applicant: { required: ['taxId' as const] } } });
    const gone = async () => undefined;
    const created = { ...(clients as { submission: object }).submission, GetSubmission: async () => ({ submission: { submissionId: 's1' } }) };
    const again = { ...(clients as object), submission: created } as never;
    for (const lookup of [strict, gone]) {
      const result = await HANDLERS['submission.create']!(job, payload('ref-1'), { clients: again, product: lookup, sandbox: false, sleep });
      expect(result).toMatchObject({ submissionId: 's1', status: 'submitted' });
    }
  });
});

describe('a failure the handler did not expect', () => {
  it('fails the job at once, not retryable, unless a dependency said retrying may help', async () => {
    const { deterministicFailure } = await import('./job-handlers.js');
    const { DomainError, unavailable } = await import('@partner/shared/domain/errors');
    expect(deterministicFailure(unavailable())).toBeUndefined();
    expect(deterministicFailure(new DomainError('rate_limited', 'slow down'))).toBeUndefined();
    expect(deterministicFailure(new DomainError('internal', 'a passing fault'))).toBeUndefined();
    expect(deterministicFailure(new DomainError('validation_error', 'date out of range'))).toEqual({ code: 'validation_error', message: 'date out of range', retryable: false });
    expect(deterministicFailure(new TypeError("Cannot read properties of undefined (reading 'legalName')"))).toMatchObject({ code: 'internal', retryable: false });
  });
});
