// What the wall clock moves (API.md "Quotes…", "Policy"; DESIGN.md "Time"): one pure function of
// (now, records) → the transitions due, in time order. The sweeper (sweeper.ts) applies them on the
// wall clock; a test clock's advance (issue 44) runs the same function on its own clock.
//
// A policy is `pending` until its effective date (00:00 UTC that day), then `active`, then `expired`
// after its expiration date (00:00 UTC the day after). An `open` quote past its validUntil is `expired`.

export interface TimedPolicy {
  policyId: string;
  status: 'pending' | 'active' | 'expired' | 'cancelled';
  /** YYYY-MM-DD. */
  effectiveDate: string;
  expirationDate: string;
}

export interface TimedQuote {
  quoteId: string;
  status: string;
  validUntil: Date | null;
  /** A referred quote's dueBy, and whether it was reported overdue already (issue 44). */
  referralDueBy?: Date | null;
  overdueReported?: boolean;
}

export type Transition =
  | { kind: 'policy'; id: string; from: 'pending' | 'active'; to: 'active' | 'expired'; at: Date }
  | { kind: 'quote'; id: string; from: 'open'; to: 'expired'; at: Date }
  /** A referral past its dueBy, reported overdue once (its quote stays referred). */
  | { kind: 'referral'; id: string; from: 'referred'; to: 'overdue'; at: Date };

const dayStart = (date: string): Date => new Date(`${date}T00:00:00.000Z`);
const dayAfter = (date: string): Date => new Date(dayStart(date).getTime() + 86_400_000);

/** The transitions due at `now` for these records, oldest first (a record may move twice: pending → active → expired). */
export function dueTransitions(now: Date, records: { policies?: readonly TimedPolicy[]; quotes?: readonly TimedQuote[] }): Transition[] {
  const out: Transition[] = [];
  const t = now.getTime();
  for (const p of records.policies ?? []) {
    let status = p.status;
    const activeAt = dayStart(p.effectiveDate);
    if (status === 'pending' && activeAt.getTime() <= t) {
      out.push({ kind: 'policy', id: p.policyId, from: 'pending', to: 'active', at: activeAt });
      status = 'active';
    }
    const expiredAt = dayAfter(p.expirationDate);
    if (status === 'active' && expiredAt.getTime() <= t) out.push({ kind: 'policy', id: p.policyId, from: 'active', to: 'expired', at: expiredAt });
  }
  for (const q of records.quotes ?? []) {
    if (q.status === 'open' && q.validUntil && q.validUntil.getTime() <= t) out.push({ kind: 'quote', id: q.quoteId, from: 'open', to: 'expired', at: q.validUntil });
    if (q.status === 'referred' && q.referralDueBy && !q.overdueReported && q.referralDueBy.getTime() <= t) {
      out.push({ kind: 'referral', id: q.quoteId, from: 'referred', to: 'overdue', at: q.referralDueBy });
    }
  }
  return out.sort((a, b) => a.at.getTime() - b.at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The status a policy is issued in at `now`: what the transitions make of a pending one. */
export function statusAtIssue(now: Date, p: Omit<TimedPolicy, 'status' | 'policyId'>): TimedPolicy['status'] {
  let status: TimedPolicy['status'] = 'pending';
  for (const tr of dueTransitions(now, { policies: [{ ...p, policyId: '', status }] })) status = tr.to as TimedPolicy['status'];
  return status;
}

/** An open quote past validUntil is expired (a bind checks this before anything else). */
export const quoteLapsed = (now: Date, q: TimedQuote): boolean => dueTransitions(now, { quotes: [q] }).length > 0;
