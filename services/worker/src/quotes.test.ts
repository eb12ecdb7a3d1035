import { describe, expect, it } from 'vitest';
import { quoteRefusal } from './quotes.js';

const submission = (status: string, clearance: string, due: string[]) => ({ status, clearance: { status: clearance }, requirements: { currentlyDue: due } });
const refusal = (s: ReturnType<typeof submission>) => {
  const r = quoteRefusal(s);
  return r && { code: r.error.code, details: JSON.parse(r.error.detailsJson ?? '[]') as { field: string }[] };
};

describe('quoteRefusal: the contract\'s refusals, in its order', () => {
  it('a quotable submission: none', () => {
    expect(quoteRefusal(submission('submitted', 'cleared', []))).toBeUndefined();
  });

  it('withdrawn or bound first (naming status), whatever else is wrong', () => {
    expect(refusal(submission('withdrawn', 'blocked', ['attachments.loss_run']))).toEqual({ code: 'not_quotable', details: [{ field: 'status', issue: 'is withdrawn' }] });
    expect(refusal(submission('bound', 'cleared', []))).toEqual({ code: 'not_quotable', details: [{ field: 'status', issue: 'is bound' }] });
  });

  it('then a clearance that is not cleared (naming clearance.status), then anything currently due', () => {
    for (const c of ['blocked', 'review', 'duplicate']) {
      expect(refusal(submission('submitted', c, ['attachments.loss_run']))?.details[0]!.field).toBe('clearance.status');
    }
    expect(refusal(submission('submitted', 'cleared', ['attachments.loss_run']))).toMatchObject({ code: 'requirements_not_met', details: [{ field: 'requirements.currentlyDue' }] });
  });
});
