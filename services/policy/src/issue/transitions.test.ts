import { describe, expect, it } from 'vitest';
import { dueTransitions, quoteLapsed, statusAtIssue } from './transitions.js';

const at = (s: string) => new Date(s);

describe('dueTransitions', () => {
  it('moves pending → active on the effective date and active → expired the day after the expiration date, in time order', () => {
    const policies = [
      { policyId: 'b', status: 'pending' as const, effectiveDate: '2026-01-01', expirationDate: '2027-01-01' },
      { policyId: 'a', status: 'active' as const, effectiveDate: '2025-01-01', expirationDate: '2026-01-01' },
      { policyId: 'c', status: 'pending' as const, effectiveDate: '2026-06-01', expirationDate: '2027-06-01' },
      { policyId: 'd', status: 'cancelled' as const, effectiveDate: '2020-01-01', expirationDate: '2021-01-01' },
    ];
    const quotes = [
      { quoteId: 'q1', status: 'open', validUntil: at('2026-01-01T12:00:00Z') },
      { quoteId: 'q2', status: 'open', validUntil: at('2026-02-01T00:00:00Z') },
      { quoteId: 'q3', status: 'bound', validUntil: at('2025-01-01T00:00:00Z') },
    ];
    const due = dueTransitions(at('2026-01-02T00:00:00Z'), { policies, quotes });
    expect(due.map((t) => `${t.id}:${t.to}@${t.at.toISOString()}`)).toEqual([
      'b:active@2026-01-01T00:00:00.000Z',
      'q1:expired@2026-01-01T12:00:00.000Z',
      'a:expired@2026-01-02T00:00:00.000Z',
    ]);
    // A pending policy whose whole term passed moves twice.
    expect(dueTransitions(at('2030-01-01T00:00:00Z'), { policies: [policies[0]!] }).map((t) => t.to)).toEqual(['active', 'expired']);
    // Nothing is due a millisecond early.
    expect(dueTransitions(at('2025-12-31T23:59:59.999Z'), { policies: [policies[0]!] })).toEqual([]);
  });

  it('a policy effective today is active at issue; one effective tomorrow is pending', () => {
    const now = at('2026-11-27T05:00:00Z');
    expect(statusAtIssue(now, { effectiveDate: '2026-11-27', expirationDate: '2027-11-27' })).toBe('active');
    expect(statusAtIssue(now, { effectiveDate: '2026-11-28', expirationDate: '2027-11-28' })).toBe('pending');
  });

  it('an open quote is lapsed at its validUntil', () => {
    const q = { quoteId: 'q', status: 'open', validUntil: at('2026-01-01T00:00:00Z') };
    expect(quoteLapsed(at('2025-12-31T23:59:59.999Z'), q)).toBe(false);
    expect(quoteLapsed(at('2026-01-01T00:00:00Z'), q)).toBe(true);
  });
});
