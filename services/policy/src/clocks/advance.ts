// A test clock's advance (job test_clock.advance; API.md "Test clocks"): every transition due on the
// clock's records at or before the new time, computed by the wall-clock sweeper's function
// (dueTransitions) and applied by the same code (applyTransitions), in time order, in batches.
//
// One call is one batch in one transaction: the clock's records due next (by due time, at most
// `batch` of them), their transitions up to the last of those times, their events (outbox), and the
// job's progress row (test_clock_advances, keyed by the job id). A worker killed between two calls
// leaves the batches it committed behind; the job's next delivery calls again and continues with the
// records still due (a moved record is no longer due), so nothing is applied or announced twice. The
// last call (fewer than `batch` records left) sets the clock's time and makes it `ready`.
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { withTx, type Pool, type PoolClient } from '@partner/shared/db/pg';
import type { RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import type { Owner } from '../policies.js';
import { applyTransitions } from '../issue/apply.js';
import { dueTransitions, type TimedPolicy, type TimedQuote } from '../issue/transitions.js';
import { clockAdvancing, CLOCK_COLUMNS, frozenTimeError, parseFrozenTime, isTestClockId, twoYearsAfter, type ClockRow } from './test-clocks.js';

type Names = ReturnType<typeof natsNames>;

export const DEFAULT_BATCH = 500;

interface Progress {
  job_id: string;
  to_time: Date;
  batches: number;
  quotes_expired: number;
  policies_activated: number;
  policies_expired: number;
  referrals_overdue: number;
  finished_at: Date | null;
}

export interface AdvanceStep {
  clock: ClockRow;
  done: boolean;
  quotesExpired: number;
  policiesActivated: number;
  policiesExpired: number;
  referralsOverdue: number;
  events: RecordedEvent[];
}

/** Checks a new time against a clock's (the gateway asks before queuing; the job again). */
export function advanceProblem(current: Date, target: Date): string | undefined {
  if (target.getTime() <= current.getTime()) return `must be later than the clock's frozenTime (${current.toISOString()})`;
  if (target.getTime() > twoYearsAfter(current).getTime()) return 'must be at most two years after the clock\'s frozenTime';
  return undefined;
}


/** The clock's records due at or before `to`, earliest first, at most `limit` (a policy counts once per due moment). */
async function dueRecords(tx: PoolClient, clockId: string, to: Date, limit: number) {
  const toDay = to.toISOString().slice(0, 10);
  const r = await tx.query<{ kind: 'q' | 'p'; id: string; at: Date }>(
    `(SELECT 'q' AS kind, quote_id::text AS id, valid_until AS at FROM quotes
        WHERE test_clock_id = $1 AND status = 'open' AND valid_until <= $2 ORDER BY valid_until LIMIT $4)
     UNION ALL
     (SELECT 'q', quote_id::text, referral_due_by FROM quotes
        WHERE test_clock_id = $1 AND status = 'referred' AND referral_overdue_at IS NULL AND referral_due_by <= $2 ORDER BY referral_due_by LIMIT $4)
     UNION ALL
     (SELECT 'p', policy_id::text, effective_date::timestamp AT TIME ZONE 'UTC' FROM policies
        WHERE test_clock_id = $1 AND status = 'pending' AND effective_date <= $3::date ORDER BY effective_date LIMIT $4)
     UNION ALL
     (SELECT 'p', policy_id::text, (expiration_date + 1)::timestamp AT TIME ZONE 'UTC' FROM policies
        WHERE test_clock_id = $1 AND status = 'active' AND expiration_date < $3::date ORDER BY expiration_date LIMIT $4)
     ORDER BY at, id LIMIT $4`,
    [clockId, to, toDay, limit],
  );
  return r.rows;
}

/** One batch of job `jobId`'s advance of a clock to `frozenTime` (see the file's comment). */
export async function advanceStep(
  pool: Pool,
  names: Names,
  owner: Owner,
  a: { jobId: string; testClockId: string; frozenTime: string; batch?: number },
): Promise<AdvanceStep> {
  if (!a.jobId) throw new DomainError('validation_error', 'job_id is required');
  const batch = a.batch && a.batch > 0 ? Math.min(a.batch, 5000) : DEFAULT_BATCH;
  const target = parseFrozenTime(a.frozenTime);
  return withTx(pool, async (tx) => {
    const clock = isTestClockId(a.testClockId)
      ? (
          await tx.query<ClockRow>(
            `SELECT ${CLOCK_COLUMNS} FROM test_clocks WHERE test_clock_id = $1 AND tenant_id = $2 AND partner_id = $3 AND deleted_at IS NULL FOR UPDATE`,
            [a.testClockId, owner.tenantId, owner.partnerId],
          )
        ).rows[0]
      : undefined;
    let progress = (await tx.query<Progress>(`SELECT * FROM test_clock_advances WHERE job_id = $1`, [a.jobId])).rows[0];
    const result = (p: Progress, c: ClockRow, done: boolean, events: RecordedEvent[] = []): AdvanceStep => ({
      clock: c,
      done,
      quotesExpired: p.quotes_expired,
      policiesActivated: p.policies_activated,
      policiesExpired: p.policies_expired,
      referralsOverdue: p.referrals_overdue,
      events,
    });
    if (progress?.finished_at) {
      const c = clock ?? (await tx.query<ClockRow>(`SELECT ${CLOCK_COLUMNS} FROM test_clocks WHERE test_clock_id = $1`, [a.testClockId])).rows[0]!;
      return result(progress, c, true);
    }
    if (!clock) throw notFound('test clock');
    if (!progress) {
      if (clock.status === 'advancing') throw clockAdvancing(clock.test_clock_id);
      const problem = advanceProblem(clock.frozen_time, target);
      if (problem) throw frozenTimeError(problem);
      progress = (
        await tx.query<Progress>(`INSERT INTO test_clock_advances (job_id, test_clock_id, from_time, to_time) VALUES ($1, $2, $3, $4) RETURNING *`, [
          a.jobId,
          clock.test_clock_id,
          clock.frozen_time,
          target,
        ])
      ).rows[0]!;
      await tx.query(
        `UPDATE test_clocks SET status = 'advancing', advance_job_id = $2, advance_to = $3, updated_at = date_trunc('milliseconds', now()) WHERE test_clock_id = $1`,
        [clock.test_clock_id, a.jobId, target],
      );
    } else if (clock.advance_job_id !== a.jobId) {
      throw clockAdvancing(clock.test_clock_id);
    }
    const to = progress.to_time;
    const due = await dueRecords(tx, clock.test_clock_id, to, batch);
    const last = due.length < batch;
    // Up to the last due time read (all of the batch's moments; a record due later waits for the next batch).
    const through = last ? to : due[due.length - 1]!.at;
    const quoteIds = [...new Set(due.filter((d) => d.kind === 'q').map((d) => d.id))];
    const policyIds = [...new Set(due.filter((d) => d.kind === 'p').map((d) => d.id))];
    const quotes = quoteIds.length
      ? (
          await tx.query<{ quote_id: string; status: string; valid_until: Date | null; referral_due_by: Date | null; referral_overdue_at: Date | null }>(
            `SELECT quote_id, status, valid_until, referral_due_by, referral_overdue_at FROM quotes WHERE quote_id = ANY($1::uuid[]) ORDER BY quote_id FOR UPDATE`,
            [quoteIds],
          )
        ).rows
      : [];
    const policies = policyIds.length
      ? (
          await tx.query<{ policy_id: string; status: TimedPolicy['status']; effective_date: string; expiration_date: string }>(
            `SELECT policy_id, status, effective_date::text AS effective_date, expiration_date::text AS expiration_date FROM policies
              WHERE policy_id = ANY($1::uuid[]) ORDER BY policy_id FOR UPDATE`,
            [policyIds],
          )
        ).rows
      : [];
    const transitions = dueTransitions(through, {
      policies: policies.map((p) => ({ policyId: p.policy_id, status: p.status, effectiveDate: p.effective_date, expirationDate: p.expiration_date })),
      quotes: quotes.map(
        (q): TimedQuote => ({
          quoteId: q.quote_id,
          status: q.status,
          validUntil: q.valid_until,
          referralDueBy: q.referral_due_by,
          overdueReported: q.referral_overdue_at !== null,
        }),
      ),
    });
    const applied = await applyTransitions(tx, names, transitions);
    progress = (
      await tx.query<Progress>(
        `UPDATE test_clock_advances SET batches = batches + 1, quotes_expired = quotes_expired + $2, policies_activated = policies_activated + $3,
           policies_expired = policies_expired + $4, referrals_overdue = referrals_overdue + $5, applied_through = $6,
           finished_at = CASE WHEN $7 THEN date_trunc('milliseconds', now()) END
          WHERE job_id = $1 RETURNING *`,
        [a.jobId, applied.quotesExpired, applied.activated, applied.expired, applied.referralsOverdue, through, last],
      )
    ).rows[0]!;
    let c = clock;
    if (last) {
      c = (
        await tx.query<ClockRow>(
          `UPDATE test_clocks SET frozen_time = $2, status = 'ready', advance_job_id = NULL, advance_to = NULL, updated_at = date_trunc('milliseconds', now())
            WHERE test_clock_id = $1 RETURNING ${CLOCK_COLUMNS}`,
          [clock.test_clock_id, to],
        )
      ).rows[0]!;
    }
    return result(progress, c, last, applied.events);
  });
}
