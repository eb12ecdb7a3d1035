// One clock for every rule that time moves (issue 44; DESIGN.md "Time"): the modules holding those
// rules read "now" only through shared/domain/clock.ts, so a test clock's time reaches all of them.
// This test fails when one of them reads the wall clock on its own (Date.now(), new Date() without
// an argument). It also pins the overdue referral the advance reports through dueTransitions.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dueTransitions } from '../issue/transitions.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** The rule modules: the requirements' effective-date window, quotes' validUntil/expiry and referrals, the bind's day, policies' activation/expiration, the advance. */
export const RULE_MODULES = [
  'services/shared/src/domain/submission-rules.ts',
  'services/shared/src/domain/requirements.ts',
  'services/policy/src/issue/transitions.ts',
  'services/policy/src/issue/apply.ts',
  'services/policy/src/issue/sweeper.ts',
  'services/policy/src/issue/bind.ts',
  'services/policy/src/quotes/repository.ts',
  'services/policy/src/clocks/test-clocks.ts',
  'services/policy/src/clocks/advance.ts',
];
const WALL_CLOCK = /\bDate\.now\s*\(|\bnew\s+Date\s*\(\s*\)/;

describe('the rules that time moves read one clock', () => {
  it.each(RULE_MODULES)('%s has no Date.now() or new Date() of its own', (file) => {
    const code = readFileSync(`${ROOT}${file}`, 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line));
    const offending = code.map((line, i) => [i + 1, line] as const).filter(([, line]) => WALL_CLOCK.test(line));
    expect(offending).toEqual([]);
  });

  it('the pattern catches what it must', () => {
    for (const bad of ['const t = Date.now();', 'return new Date();', 'x = new Date( )']) expect(WALL_CLOCK.test(bad), bad).toBe(true);
    for (const ok of ['new Date(t)', 'clock.now()', 'new Date(`${d}T00:00:00Z`)']) expect(WALL_CLOCK.test(ok), ok).toBe(false);
  });
});

describe('dueTransitions: referrals', () => {
  const due = new Date('2030-01-02T00:00:00Z');
  it('reports a referral past its dueBy once, in time order with the others', () => {
    const out = dueTransitions(new Date('2030-01-10T00:00:00Z'), {
      quotes: [
        { quoteId: 'b', status: 'open', validUntil: new Date('2030-01-05T00:00:00Z') },
        { quoteId: 'a', status: 'referred', validUntil: null, referralDueBy: due },
        { quoteId: 'c', status: 'referred', validUntil: null, referralDueBy: due, overdueReported: true },
        { quoteId: 'd', status: 'referred', validUntil: null, referralDueBy: new Date('2030-02-01T00:00:00Z') },
      ],
      policies: [{ policyId: 'p', status: 'pending', effectiveDate: '2030-01-03', expirationDate: '2031-01-03' }],
    });
    expect(out.map((t) => [t.kind, t.id, t.to])).toEqual([
      ['referral', 'a', 'overdue'],
      ['policy', 'p', 'active'],
      ['quote', 'b', 'expired'],
    ]);
  });
});
