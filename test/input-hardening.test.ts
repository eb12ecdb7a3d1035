// The breaks a hostile probe found in input handling (issue 19), each shown closed against the real
// stack: text with NUL, control characters or lone surrogates, and dates or timestamps outside years
// 0001–9999, are refused at the edge with 400 validation_error naming the field, on every route,
// and nothing is queued; a job whose own input fails in a service fails at once, not retryable,
// without burning deliveries.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createClient, serviceDefs } from '@partner/shared/grpc';
import { newJobId } from '@partner/shared/ids';
import { type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { PRODUCT } from './support/fixtures.js';
import { until } from './support/poll.js';

let client: ClientCreds;
let token: string;

const submission = (over: Record<string, unknown> = {}, applicant: Record<string, unknown> = {}) => ({
  externalRef: `ref-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: PRODUCT,
  applicant: { legalName: 'Acme Holdings LLC', ...applicant },
  ...over,
});

const jobCount = async (): Promise<number> =>
  Number((await stack.sql<{ n: string }>('SELECT count(*) AS n FROM job.jobs WHERE tenant_id = $1', [client.tenant]))[0]!.n);

const stack = useStack(async (stack) => {
  await stack.startAll({ WORKER_BACKOFF_MS: '200', WORKER_MAX_DELIVERIES: '5' });
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Hardening product');
  client = await stack.createClient();
  token = await stack.token(client);
});

describe('text in request bodies and query strings', () => {
  it.each([
    ['externalRef', submission({ externalRef: 'a\u0000b' })],
    ['applicant.legalName', submission({}, { legalName: 'Acme\u0000Corp' })],
    ['applicant.legalName', submission({}, { legalName: 'Acme \ud800' })],
    ['externalRef', submission({ externalRef: '\udc00ref' })],
    ['externalRef', submission({ externalRef: 'bell\u0007' })],
    ['applicant.legalName', submission({}, { legalName: 'new\nline' })],
  ])('refuses %s with NUL, a control character or a lone surrogate: 400 naming it, nothing queued', async (field, body) => {
    const before = await jobCount();
    for (const prefer of [undefined, 'wait=5']) {
      const r = await stack.api('POST', '/v1/submissions', { token, json: body, headers: prefer ? { prefer } : {} });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'validation_error', retryable: false });
      expect(r.body.error.details).toContainEqual(expect.objectContaining({ field }));
    }
    expect(await jobCount()).toBe(before);
  });

  it('refuses a name made only of spaces or invisible characters', async () => {
    for (const legalName of ['\u200b', '\u200b\u200c\u200d\ufeff', ' \u00ad ', '\u2060']) {
      const r = await stack.api('POST', '/v1/submissions', { token, json: submission({}, { legalName }) });
      expect(r.status, JSON.stringify(legalName)).toBe(400);
      expect(r.body.error.details).toContainEqual({ field: 'applicant.legalName', issue: expect.stringMatching(/visible character/) });
    }
    // A visible name with a zero-width joiner inside (as in some scripts and emoji) is fine.
    const ok = await stack.api('POST', '/v1/submissions', { token, json: submission({}, { legalName: 'Acme\u200dCo' }) });
    expect(ok.status).toBe(202);
  });

  it('refuses a NUL or control character in any query parameter of any route', async () => {
    const me = await stack.api('GET', '/v1/health', { token });
    expect(me.status).toBe(200);
    for (const path of ['/v1/health?x=a%00b', '/v1/policies?policyNumber=P%00', '/v1/policies?status=%01', `/v1/jobs/${newJobId()}?q=%1b`, '/v1/policies?a%00=1']) {
      const r = await stack.api('GET', path, { token });
      expect(r.status, path).toBe(400);
      expect(r.body.error.code).toBe('validation_error');
      expect(r.body.error.details.length).toBeGreaterThan(0);
    }
  });
});

describe('dates and timestamps', () => {
  it.each(['0000-01-01', '0000-12-31', '10000-01-01', '-0001-01-01'])('refuses effectiveDate %s at the edge: 400, nothing queued', async (effectiveDate) => {
    const before = await jobCount();
    const r = await stack.api('POST', '/v1/submissions', { token, json: submission({ effectiveDate }), headers: { prefer: 'wait=5' } });
    expect(r.status).toBe(400);
    expect(r.body.error.details).toContainEqual(expect.objectContaining({ field: 'effectiveDate' }));
    expect(await jobCount()).toBe(before);
  });

  it('accepts the first and last representable dates', async () => {
    for (const effectiveDate of ['0001-01-01', '9999-12-31']) {
      const r = await stack.api('POST', '/v1/submissions', { token, json: submission({ effectiveDate }), headers: { prefer: 'wait=10' } });
      expect(r.status, effectiveDate).toBe(200);
    }
  });

  it.each(['9999-12-31T23:59:59-23:59', '9999-12-31T23:30:00-01:00', '0001-01-01T00:00:00%2B00:01', '0000-06-01T00:00:00Z'])(
    'refuses updatedSince=%s (outside years 0001–9999 once its offset is applied) with 400',
    async (value) => {
      const r = await stack.api('GET', `/v1/policies?updatedSince=${value}`, { token });
      expect(r.status).toBe(400);
      expect(r.body.error.details).toEqual([expect.objectContaining({ field: 'updatedSince' })]);
    },
  );

  it('accepts the edges of the range', async () => {
    for (const value of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '0001-01-01T10:00:00%2B09:59']) {
      const r = await stack.api('GET', `/v1/policies?updatedSince=${value}`, { token });
      expect(r.status, value).toBe(200);
    }
  });
});

describe('a job that fails on its own input', () => {
  // Straight to the job service, past the gateway's checks: what the worker does when the input
  // fails deep down (here: a date PostgreSQL cannot store; a payload the handler cannot read).
  const submitDirect = async (payload: unknown): Promise<string> => {
    const jobs = createClient(serviceDefs().job, stack.env.JOB_GRPC_ADDR!, 5_000);
    try {
      const jobId = newJobId();
      await jobs.SubmitJob({
        jobId,
        kind: 'submission.create',
        caller: { tenantId: client.tenant, partnerId: client.partnerId, clientId: client.clientId, principalId: '' },
        payloadJson: JSON.stringify(payload),
      });
      return jobId;
    } finally {
      jobs.close();
    }
  };
  const settled = async (jobId: string) => {
    let row: { status: string; error: { code: string; retryable: boolean } | null; deliveries: number } | undefined;
    await until(`job ${jobId} settled`, async () => {
      [row] = await stack.sql<NonNullable<typeof row>>('SELECT status, error, deliveries FROM job.jobs WHERE job_id = $1', [jobId]);
      return row?.status === 'succeeded' || row?.status === 'failed';
    });
    return row!;
  };

  it('fails at once, not retryable, on its first delivery', async () => {
    const outOfRange = await submitDirect(submission({ effectiveDate: '0000-01-01' }));
    const unreadable = await submitDirect({ externalRef: 'no applicant', submissionType: 'application', effectiveDate: '2027-01-01', productId: PRODUCT });
    const a = await settled(outOfRange);
    expect(a).toMatchObject({ status: 'failed', error: { code: 'validation_error', retryable: false } });
    expect(a.deliveries).toBeLessThanOrEqual(1);
    const b = await settled(unreadable);
    expect(b).toMatchObject({ status: 'failed', error: { code: 'internal', retryable: false } });
    expect(b.deliveries).toBeLessThanOrEqual(1);
    // What the partner sees on the job.
    const r = await stack.api('GET', `/v1/jobs/${outOfRange}`, { token });
    expect(r.body).toMatchObject({ status: 'failed', error: { code: 'validation_error', retryable: false } });
  });
});
