// One delivery's steps (JobConsumer.process) against fake gRPC clients and a fake JetStream message:
// what is settled, acked, nak'ed (with which delay) or terminated, and what is never run.
import { describe, expect, it } from 'vitest';
import type { JsMsg } from 'nats';
import { EnvReader } from '@partner/shared/config/env';
import { DomainError, unavailable } from '@partner/shared/domain/errors';
import { jobMessageJson } from '@partner/shared/domain/jobs';
import { submissionRecord } from '@partner/shared/domain/submission-record';
import { createLogger } from '@partner/shared/telemetry/logger';
import { readWorkerConfig } from './config.js';
import { JobConsumer } from './consumer.js';

const JOB = 'job_0123456789abcdef0123456789abcdef';
const CALLER = { tenantId: 't', partnerId: 'p', clientId: 'c', principalId: '' };
const PAYLOAD = { externalRef: 'ref-1', submissionType: 'application', effectiveDate: '2027-01-01', productId: '11111111-2222-4333-8444-555555555555', applicant: { legalName: 'Acme' } };

function message(body: string, deliveryCount = 1) {
  const acks: string[] = [];
  const m = {
    subject: 'p.jobs.submission_create',
    headers: undefined,
    info: { deliveryCount, streamSequence: 1, timestampNanos: Date.now() * 1e6 },
    string: () => body,
    ack: () => void acks.push('ack'),
    nak: (ms?: number) => void acks.push(ms === undefined ? 'nak' : `nak ${ms}`),
    term: () => void acks.push('term'),
    working: () => undefined,
  };
  return { m: m as unknown as JsMsg, acks };
}

function consumer(
  over: { createSubmission?: () => Promise<unknown>; startJob?: () => Promise<unknown>; claimed?: boolean; afterEffect?: (id: string) => void; env?: Record<string, string> } = {},
) {
  const calls: string[] = [];
  const settled: unknown[] = [];
  const clients = {
    policy: { GetProduct: async () => (calls.push('GetProduct'), { product: { productId: 'x', name: 'x', active: true, requirementsVersion: '1', requirementsJson: '' } }) },
    submission: {
      CreateSubmission:
        over.createSubmission ??
        (async () => (calls.push('CreateSubmission'), { submission: { submissionId: 's1', submissionName: 'Acme', status: 'submitted' } })),
    },
    job: {
      StartJob: over.startJob ?? (async () => (calls.push('StartJob'), { job: { kind: 'submission.create', status: 'JOB_STATUS_RUNNING', caller: CALLER, payloadJson: JSON.stringify(PAYLOAD) } })),
      ClaimJobs: async (req: { items: unknown[] }) => (calls.push('ClaimJobs'), { claimed: req.items.map(() => over.claimed ?? true) }),
      SettleJob: async (req: unknown) => (calls.push('SettleJob'), settled.push(req), { settledNow: true, job: {} }),
    },
  };
  const config = readWorkerConfig(new EnvReader({ WORKER_RUNNING_AFTER_MS: '60000', WORKER_BACKOFF_MS: '1000,5000', WORKER_MAX_DELIVERIES: '3', ...over.env }));
  const c = new JobConsumer({} as never, config, clients as never, createLogger('worker', 'silent'), undefined, over.afterEffect);
  return { c, calls, settled };
}

const full = () => jobMessageJson(JOB, 'submission.create', CALLER, JSON.stringify(PAYLOAD));

describe('a delivery', () => {
  it('claims a first delivery, runs it from its message alone, settles it with the result, then acks', async () => {
    const { c, calls, settled } = consumer();
    const { m, acks } = message(full());
    expect(await c.process(m)).toMatchObject({ jobId: JOB, kind: 'submission.create', outcome: 'succeeded' });
    expect(calls).toEqual(['ClaimJobs', 'GetProduct', 'CreateSubmission', 'SettleJob']);
    expect(settled).toEqual([{ jobId: JOB, delivery: 1, resultJson: JSON.stringify(submissionRecord({ submissionId: 's1', submissionName: 'Acme', status: 'submitted' } as never)) }]);
    expect(acks).toEqual(['ack']);
  });

  it('acks a job it cannot claim (cancelled or settled), calling nothing else', async () => {
    for (const delivery of [1, 2]) {
      const { c, calls, settled } = consumer({ claimed: false });
      const { m, acks } = message(full(), delivery);
      expect(await c.process(m)).toMatchObject({ outcome: 'skipped' });
      expect(calls).toEqual(['ClaimJobs']);
      expect(settled).toEqual([]);
      expect(acks).toEqual(['ack']);
    }
  });

  it('claims concurrent deliveries together, in one ClaimJobs call', async () => {
    const { c, calls } = consumer();
    const ids = ['1', '2', '3', '4'].map((n) => `job_${n.repeat(32)}`);
    await Promise.all(ids.map((id) => c.process(message(jobMessageJson(id, 'submission.create', CALLER, JSON.stringify(PAYLOAD))).m)));
    // The first goes alone and at once; the rest, arriving while it runs, share the next call.
    expect(calls.filter((x) => x === 'ClaimJobs').length).toBeLessThan(ids.length);
  });

  it('defers a sandbox:hold job unclaimed until its hold ends, without running anything', async () => {
    const { c, calls } = consumer();
    const { m, acks } = message(jobMessageJson(JOB, 'submission.create', CALLER, JSON.stringify({ ...PAYLOAD, externalRef: 'sandbox:hold=5;delay=1' })));
    const r = await c.process(m);
    expect(r).toMatchObject({ outcome: 'held' });
    expect(r.retryInMs).toBeGreaterThan(4_000);
    expect(r.retryInMs).toBeLessThanOrEqual(5_000);
    expect(calls).toEqual([]);
    expect(acks).toEqual([`nak ${r.retryInMs}`]);
    // In production, a sandbox directive is an ordinary reference.
    const prod = consumer({ env: { ENVIRONMENT: 'production' } });
    const held = message(jobMessageJson(JOB, 'submission.create', CALLER, JSON.stringify({ ...PAYLOAD, externalRef: 'sandbox:hold=5' })));
    expect(await prod.c.process(held.m)).toMatchObject({ outcome: 'succeeded' });
  });

  it('reads a job published by id alone first (StartJob: the claim) and skips one that has settled or was cancelled', async () => {
    for (const status of ['JOB_STATUS_SUCCEEDED', 'JOB_STATUS_CANCELED']) {
      const { c, calls } = consumer({ startJob: async () => ({ job: { kind: 'submission.create', status, caller: CALLER, payloadJson: '{}' } }) });
      const { m, acks } = message(JSON.stringify({ jobId: JOB }), 2);
      expect(await c.process(m)).toMatchObject({ outcome: 'skipped' });
      expect(calls).toEqual([]);
      expect(acks).toEqual(['ack']);
    }
  });

  it('runs the first delivery unclaimed with WORKER_CLAIM=off (the bench\'s baseline)', async () => {
    const { c, calls } = consumer({ env: { WORKER_CLAIM: 'false' } });
    await c.process(message(full()).m);
    expect(calls).toEqual(['GetProduct', 'CreateSubmission', 'SettleJob']);
  });

  it('skips a redelivered job that has settled, running nothing', async () => {
    const { c, calls } = consumer({ claimed: false });
    const { m, acks } = message(full(), 2);
    expect(await c.process(m)).toMatchObject({ outcome: 'skipped' });
    expect(calls).toEqual(['ClaimJobs']);
    expect(acks).toEqual(['ack']);
  });

  it('naks a transient failure with the backoff of its delivery, settling nothing', async () => {
    const { c, settled } = consumer({ createSubmission: async () => Promise.reject(unavailable()) });
    const first = message(full(), 1);
    expect(await c.process(first.m)).toMatchObject({ outcome: 'retried', retryInMs: 1000 });
    expect(first.acks).toEqual(['nak 1000']);
    const second = message(full(), 2);
    await c.process(second.m);
    expect(second.acks).toEqual(['nak 5000']);
    expect(settled).toEqual([]);
  });

  it('settles a failure on the job\'s own input at once, not retryable', async () => {
    const { c, settled } = consumer({ createSubmission: async () => Promise.reject(new DomainError('validation_error', 'date out of range')) });
    const { m, acks } = message(full());
    expect(await c.process(m)).toMatchObject({ outcome: 'failed', error: 'validation_error' });
    expect(settled).toEqual([{ jobId: JOB, delivery: 1, error: { code: 'validation_error', message: 'date out of range', retryable: false } }]);
    expect(acks).toEqual(['ack']);
  });

  it('fails the job, retryable, after its last delivery, without running it', async () => {
    const { c, calls, settled } = consumer();
    const { m, acks } = message(full(), 4);
    expect(await c.process(m)).toMatchObject({ outcome: 'failed', gaveUp: true });
    expect(calls).toEqual(['SettleJob']);
    expect(settled).toEqual([{ jobId: JOB, error: { code: 'internal', message: 'the job could not be processed after 3 attempts; retry the request', retryable: true } }]);
    expect(acks).toEqual(['ack']);
  });

  it('terminates a message that is not a job, and one whose job does not exist', async () => {
    const { c } = consumer({ startJob: async () => Promise.reject(new DomainError('not_found', 'no such job')) });
    const garbage = message('{"nope":1}');
    expect(await c.process(garbage.m)).toMatchObject({ outcome: 'malformed' });
    expect(garbage.acks).toEqual(['term']);
    const orphan = message(JSON.stringify({ jobId: JOB }), 1);
    expect(await c.process(orphan.m)).toMatchObject({ outcome: 'malformed', error: 'no such job' });
    expect(orphan.acks).toEqual(['term']);
  });

  it('calls the after-effect hook between the effect and the settlement', async () => {
    const seen: string[] = [];
    const { c, calls } = consumer({ afterEffect: (id) => seen.push(`${id} after ${calls.join(',')}`) });
    await c.process(message(full()).m);
    expect(seen).toEqual([`${JOB} after ClaimJobs,GetProduct,CreateSubmission`]);
  });
});
