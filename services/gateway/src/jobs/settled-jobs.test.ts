import { describe, expect, it } from 'vitest';
import { createLogger } from '@partner/shared/telemetry/logger';
import type { JobStatusName } from '@partner/shared/domain/jobs';
import { SettlementWaiters } from '../settlement-waiters.js';
import { fakeNats } from '../settlement-waiters.test-helper.js';
import { SettledJobs } from './settled-jobs.js';

const logger = createLogger('test', 'silent');
const A = { tenantId: 't', partnerId: 'a' };
const B = { tenantId: 't', partnerId: 'b' };
const job = (id: string, status: JobStatusName = 'succeeded') => ({ id, kind: 'submission.create', status, result: {}, createdAt: 'c', updatedAt: 'u' });

describe('SettledJobs', () => {
  it('keeps settled jobs (cancelled ones too) by partner and job, never an unsettled one', () => {
    const seen: string[] = [];
    const jobs = new SettledJobs(10, { lookup: (o) => seen.push(o), size: () => undefined });
    jobs.remember(A, job('job_1'));
    jobs.remember(A, job('job_2', 'canceled'));
    jobs.remember(A, job('job_3', 'failed'));
    jobs.remember(A, job('job_4', 'running'));
    jobs.remember(A, job('job_5', 'accepted'));
    expect(jobs.get(A, 'job_1')).toMatchObject({ id: 'job_1', status: 'succeeded' });
    expect(jobs.get(A, 'job_2')?.status).toBe('canceled');
    expect(jobs.get(A, 'job_3')?.status).toBe('failed');
    expect(jobs.get(A, 'job_4')).toBeUndefined();
    expect(jobs.get(A, 'job_5')).toBeUndefined();
    // Another partner's job id is not found here (the job service then answers 404).
    expect(jobs.get(B, 'job_1')).toBeUndefined();
    expect(jobs.get({ tenantId: 'u', partnerId: 'a' }, 'job_1')).toBeUndefined();
    expect(seen).toEqual(['hit', 'hit', 'hit', 'miss', 'miss', 'miss', 'miss']);
    expect(jobs.size).toBe(3);
  });

  it('holds at most max, the least recently used going first', () => {
    let held = 0;
    const jobs = new SettledJobs(3, { lookup: () => undefined, size: (d) => (held += d) });
    for (const id of ['job_1', 'job_2', 'job_3']) jobs.remember(A, job(id));
    expect(jobs.get(A, 'job_1')).toBeDefined(); // job_1 is now the most recent
    jobs.remember(A, job('job_4'));
    expect(jobs.size).toBe(3);
    expect(held).toBe(3);
    expect(jobs.get(A, 'job_2')).toBeUndefined();
    for (const id of ['job_1', 'job_3', 'job_4']) expect(jobs.get(A, id)).toBeDefined();
    // The same job again replaces its entry rather than adding one.
    jobs.remember(A, job('job_4'));
    expect(jobs.size).toBe(3);
    expect(held).toBe(3);
    for (let i = 0; i < 1_000; i++) jobs.remember(B, job(`job_x${i}`));
    expect(jobs.size).toBe(3);
    expect(held).toBe(3);
  });

  it('keeps an error with its keys in the order a read through the job service gives them', () => {
    const jobs = new SettledJobs(10);
    // As a settlement event carries it: jsonb orders keys by length.
    const fromEvent = { ...job('job_1', 'failed'), error: { code: 'conflict', details: [{ field: 'x' }], message: 'm', retryable: false } };
    delete (fromEvent as { result?: unknown }).result;
    jobs.remember(A, fromEvent as never);
    expect(JSON.stringify(jobs.get(A, 'job_1')?.error)).toBe('{"code":"conflict","message":"m","retryable":false,"details":[{"field":"x"}]}');
    jobs.remember(A, { ...job('job_2', 'canceled'), error: { retryable: false, code: 'canceled', message: 'c' } } as never);
    expect(JSON.stringify(jobs.get(A, 'job_2')?.error)).toBe('{"code":"canceled","message":"c","retryable":false}');
  });

  it('keeps none with max 0', () => {
    const jobs = new SettledJobs(0);
    jobs.remember(A, job('job_1'));
    expect(jobs.get(A, 'job_1')).toBeUndefined();
    expect(jobs.size).toBe(0);
    expect(jobs.enabled).toBe(false);
  });

  it('is filled from the settlement events the gateway hears, with no one waiting', () => {
    const jobs = new SettledJobs(10);
    const w = new SettlementWaiters(10, logger, undefined, Number.POSITIVE_INFINITY, jobs);
    const publish = fakeNats(w);
    publish(JSON.stringify({ job: job('job_1'), tenantId: 't', partnerId: 'a' }));
    publish(JSON.stringify({ job: job('job_2', 'running'), tenantId: 't', partnerId: 'a' }));
    publish(JSON.stringify({ job: job('job_3') }));
    publish('not json');
    expect(jobs.get(A, 'job_1')).toMatchObject({ id: 'job_1' });
    expect(jobs.get(B, 'job_1')).toBeUndefined();
    expect(jobs.get(A, 'job_2')).toBeUndefined();
    expect(jobs.size).toBe(1);
  });
});
