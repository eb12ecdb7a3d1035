import { describe, expect, it } from 'vitest';
import type { JobStatusName } from '@partner/shared/domain/jobs';
import { KnownSubmissions } from './known-submissions.js';

const A = { tenantId: 't', partnerId: 'a' };
const B = { tenantId: 't', partnerId: 'b' };
const SUB = '7d5f3b7e-8f7a-4a3e-9c55-0c7d0a4f0a01';
const settled = (kind: string, status: JobStatusName, result: unknown, owner = A) => ({
  ...owner,
  job: { id: 'job_1', kind, status, result, createdAt: 'c', updatedAt: 'u' },
});

describe('KnownSubmissions', () => {
  it('learns a submission from a submission.create that succeeded, for its partner only', () => {
    const seen: string[] = [];
    const known = new KnownSubmissions(10, { lookup: (o) => seen.push(o), size: () => undefined });
    known.heard(settled('submission.create', 'succeeded', { submissionId: SUB }));
    expect(known.has(A, SUB)).toBe(true);
    expect(known.has(B, SUB)).toBe(false);
    expect(known.has({ tenantId: 'u', partnerId: 'a' }, SUB)).toBe(false);
    expect(seen).toEqual(['hit', 'miss', 'miss']);
  });

  it('learns nothing from a create that failed, a job still running, or another kind of job', () => {
    const known = new KnownSubmissions(10);
    known.heard(settled('submission.create', 'failed', { submissionId: SUB }));
    known.heard(settled('submission.create', 'running', { submissionId: SUB }));
    known.heard(settled('quote.create', 'succeeded', { submissionId: SUB }));
    known.heard(settled('submission.create', 'succeeded', undefined));
    known.heard(settled('submission.create', 'succeeded', { submissionId: 42 }));
    expect(known.size).toBe(0);
    expect(known.has(A, SUB)).toBe(false);
  });

  it('holds at most max, the least recently checked going first; max 0 holds none', () => {
    let held = 0;
    const known = new KnownSubmissions(2, { lookup: () => undefined, size: (d) => (held += d) });
    for (const id of ['s1', 's2']) known.remember(A, id);
    expect(known.has(A, 's1')).toBe(true); // s1 is now the most recent
    known.remember(A, 's3');
    expect([known.has(A, 's1'), known.has(A, 's2'), known.has(A, 's3')]).toEqual([true, false, true]);
    expect(held).toBe(2);
    const none = new KnownSubmissions(0);
    none.remember(A, 's1');
    expect(none.enabled).toBe(false);
    expect(none.has(A, 's1')).toBe(false);
  });
});
