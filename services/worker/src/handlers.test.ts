import { describe, expect, it } from 'vitest';
import { sandboxDirective } from './handlers.js';

describe('UAT sandbox directives', () => {
  it.each([
    ['sandbox:delay=1', { delayS: 1 }],
    ['sandbox:delay=60', { delayS: 60 }],
    ['sandbox:fail=unknown_product', { failCode: 'unknown_product' }],
    ['sandbox:fail=unavailable', { failCode: 'unavailable' }],
  ])('reads %s', (ref, expected) => {
    expect(sandboxDirective(ref)).toEqual(expected);
  });

  it.each(['sandbox:delay=0', 'sandbox:delay=61', 'sandbox:delay=5s', 'sandbox:fail=', 'sandbox:fail=Bad-Code', 'sandbox:fail=unauthenticated', 'PO-123', ' sandbox:delay=5'])(
    'treats %j as an ordinary reference',
    (ref) => {
      expect(sandboxDirective(ref)).toBeUndefined();
    },
  );
});

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
      CreateSubmission: async (req: { externalRef: string }) => ({
        submission: { submissionId: 's1', submissionName: 'Acme', status: 'submitted', externalRef: req.externalRef },
      }),
    },
  } as never;
  const sleep = async () => undefined;
  const product = async () => ({ active: true });

  it('honours sandbox directives in UAT', async () => {
    const { HANDLERS, JobFailed } = await import('./handlers.js');
    await expect(HANDLERS['submission.create']!(job, payload('sandbox:fail=conflict'), { clients, product, sandbox: true, sleep })).rejects.toBeInstanceOf(JobFailed);
  });

  it('treats them as ordinary references in production', async () => {
    const { HANDLERS } = await import('./handlers.js');
    const result = await HANDLERS['submission.create']!(job, payload('sandbox:fail=conflict'), { clients, product, sandbox: false, sleep });
    expect(result).toEqual({ submissionId: 's1', submissionName: 'Acme', status: 'submitted' });
  });
});
