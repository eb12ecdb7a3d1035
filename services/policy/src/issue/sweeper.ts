// The wall-clock sweeper: applies dueTransitions (transitions.ts) to the records on the wall clock
// (test-clock records move with their clock, issue 44): pending policies whose effective date came,
// active ones past their expiration date, open quotes past validUntil. Each change is a conditional
// UPDATE (from the status it was read in, so a racing bind or a second replica changes nothing twice)
// with its event (policy.updated / quote.updated) in the same transaction. Runs as a supervised loop
// (process/loops.ts) of the policy service; its passes are counted in metrics.
import { prepared, withTx, type Pool } from '@partner/shared/db/pg';
import type { Clock } from '@partner/shared/domain/clock';
import type { RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import { applyTransitions } from './apply.js';
import { dueTransitions, type TimedPolicy } from './transitions.js';

type Names = ReturnType<typeof natsNames>;

export interface SweepResult {
  activated: number;
  expired: number;
  quotesExpired: number;
  events: RecordedEvent[];
}

/** One pass: at most `batch` records of each kind per transaction, until nothing is due (or `stopping`). */
export async function sweepTransitions(
  pool: Pool,
  names: Names,
  clock: Clock,
  opts: { batch?: number; stopping?: () => boolean; onEvents?: (e: RecordedEvent[]) => void } = {},
): Promise<Omit<SweepResult, 'events'>> {
  const batch = opts.batch ?? 500;
  const total = { activated: 0, expired: 0, quotesExpired: 0 };
  for (;;) {
    const now = clock.now();
    const r = await sweepOnce(pool, names, now, batch);
    total.activated += r.activated;
    total.expired += r.expired;
    total.quotesExpired += r.quotesExpired;
    opts.onEvents?.(r.events);
    if (r.activated + r.expired + r.quotesExpired === 0 || opts.stopping?.()) return total;
  }
}

async function sweepOnce(pool: Pool, names: Names, now: Date, batch: number): Promise<SweepResult> {
  return withTx(pool, async (tx) => {
    // Today (UTC) as the due queries compare dates; the pure function decides.
    const today = now.toISOString().slice(0, 10);
    // Two queries (a locking clause is not allowed beside UNION), each one range of its partial index.
    type Due = { policy_id: string; status: TimedPolicy['status']; effective_date: string; expiration_date: string };
    const dueOf = async (where: string, order: string) =>
      (
        await tx.query<Due>(
          prepared(
            `SELECT policy_id, status, effective_date, expiration_date FROM policies
              WHERE ${where} AND quote_id IS NOT NULL AND test_clock_id IS NULL
              ORDER BY ${order} LIMIT $2 FOR UPDATE SKIP LOCKED`,
            [today, batch],
          ),
        )
      ).rows;
    const policies = [
      ...(await dueOf(`status = 'pending' AND effective_date <= $1::date`, 'effective_date')),
      ...(await dueOf(`status = 'active' AND expiration_date < $1::date`, 'expiration_date')),
    ];
    const quotes = (
      await tx.query<{ quote_id: string; valid_until: Date }>(
        prepared(
          `SELECT quote_id, valid_until FROM quotes WHERE status = 'open' AND test_clock_id IS NULL AND valid_until <= $1
            ORDER BY valid_until LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [now, batch],
        ),
      )
    ).rows;
    const due = dueTransitions(now, {
      policies: policies.map((p) => ({ policyId: p.policy_id, status: p.status, effectiveDate: p.effective_date, expirationDate: p.expiration_date })),
      quotes: quotes.map((q) => ({ quoteId: q.quote_id, status: 'open', validUntil: q.valid_until })),
    });
    // Applied in time order by the code a test clock's advance applies with (apply.ts).
    const applied = await applyTransitions(tx, names, due);
    const out: SweepResult = { activated: applied.activated, expired: applied.expired, quotesExpired: applied.quotesExpired, events: applied.events };
    return out;
  });
}
