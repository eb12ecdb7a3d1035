import { describe, expect, it } from 'vitest';
import type { JobStatusName } from '@partner/shared/domain/jobs';
import { KnownResources } from './known-resources.js';

const A = { tenantId: 't', partnerId: 'a' };
const B = { tenantId: 't', partnerId: 'b' };
const SUB = '7d5f3b7e-8f7a-4a3e-9c55-0c7d0a4f0a01';
const Q1 = '7d5f3b7e-8f7a-4a3e-9c55-0c7d0a4f0a02';
const Q2 = '7d5f3b7e-8f7a-4a3e-9c55-0c7d0a4f0a03';
const settled = (kind: string, status: JobStatusName, result: unknown, owner = A) => ({
  ...owner,
  job: { id: 'job_1', kind, status, result, createdAt: 'c', updatedAt: 'u' },
});

describe('KnownResources', () => {
  it('learns a submission from a submission.create that succeeded, for its partner only', () => {
    const seen: string[] = [];
    const known = new KnownResources(10, { lookup: (r, o) => seen.push(`${r} ${o}`), size: () => undefined });
    known.heard(settled('submission.create', 'succeeded', { submissionId: SUB }));
    expect(known.has(A, 'submission', SUB)).toBe(true);
    expect(known.has(B, 'submission', SUB)).toBe(false);
    expect(known.has({ tenantId: 'u', partnerId: 'a' }, 'submission', SUB)).toBe(false);
    // A submission's id is not a quote's.
    expect(known.has(A, 'quote', SUB)).toBe(false);
    expect(seen).toEqual(['submission hit', 'submission miss', 'submission miss', 'quote miss']);
  });

  it("learns a quote.create's quotes (not its submission: the job only read it)", () => {
    const known = new KnownResources(10);
    known.heard(settled('quote.create', 'succeeded', { submissionId: SUB, quotes: [{ quoteId: Q1 }, { quoteId: Q2 }, { quoteId: 7 }, null] }));
    expect([known.has(A, 'quote', Q1), known.has(A, 'quote', Q2), known.has(B, 'quote', Q1)]).toEqual([true, true, false]);
    expect(known.has(A, 'submission', SUB)).toBe(false);
    expect(known.size).toBe(2);
  });

  it('learns nothing from a create that failed, a job still running, another kind of job, or a result without ids', () => {
    const known = new KnownResources(10);
    known.heard(settled('submission.create', 'failed', { submissionId: SUB }));
    known.heard(settled('submission.create', 'running', { submissionId: SUB }));
    known.heard(settled('submission.withdraw', 'succeeded', { submissionId: SUB }));
    known.heard(settled('quote.create', 'failed', { quotes: [{ quoteId: Q1 }] }));
    known.heard(settled('submission.create', 'succeeded', undefined));
    known.heard(settled('submission.create', 'succeeded', { submissionId: 42 }));
    known.heard(settled('quote.create', 'succeeded', { quotes: 'none' }));
    expect(known.size).toBe(0);
  });

  it('holds at most max, the least recently checked going first; max 0 holds none', () => {
    let held = 0;
    const known = new KnownResources(2, { lookup: () => undefined, size: (d) => (held += d) });
    for (const id of ['s1', 's2']) known.remember(A, 'submission', id);
    expect(known.has(A, 'submission', 's1')).toBe(true); // s1 is now the most recent
    known.remember(A, 'quote', 'q3');
    expect([known.has(A, 'submission', 's1'), known.has(A, 'submission', 's2'), known.has(A, 'quote', 'q3')]).toEqual([true, false, true]);
    expect(held).toBe(2);
    const none = new KnownResources(0);
    none.remember(A, 'submission', 's1');
    expect(none.enabled).toBe(false);
    expect(none.has(A, 'submission', 's1')).toBe(false);
  });
});
