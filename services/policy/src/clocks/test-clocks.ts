// Test clocks (API.md "Test clocks", UAT only; issue 44; migrations/0007_test_clocks.sql): a partner's
// own time, which quotes, referrals and policies of its submissions read instead of the wall clock.
// Create and delete are idempotent by job id; every read is owner-scoped (another partner's clock is
// indistinguishable from a missing one) and a deleted clock is gone for the API.
import { randomBytes } from 'node:crypto';
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { clockAt, type Clock } from '@partner/shared/domain/clock';
import { iso } from '@partner/shared/domain/ids';
import { bindingOf, type CursorCodec, type CursorPosition } from '@partner/shared/domain/list-cursor';
import { parseTimestamp } from '@partner/shared/domain/time';
import { prepared, withTx, type Pool, type PoolClient } from '@partner/shared/db/pg';
import type { TestClock } from '@partner/shared/generated/partner/policy/v1/TestClock';
import type { Owner } from '../policies.js';

type Db = Pool | PoolClient;

/** Live clocks a partner may hold (API.md: the 11th create fails 422 limit_exceeded). */
export const MAX_LIVE_CLOCKS = 10;
/** How far one advance may move a clock: two calendar years (UTC). */
export function twoYearsAfter(t: Date): Date {
  const limit = new Date(t.getTime());
  limit.setUTCFullYear(limit.getUTCFullYear() + 2);
  return limit;
}
const CLOCK_ID = /^clk_[0-9a-z]{24}$/;

export const isTestClockId = (s: string): boolean => CLOCK_ID.test(s);
export const newTestClockId = (): string => `clk_${randomBytes(12).toString('hex')}`;

export interface ClockRow {
  test_clock_id: string;
  tenant_id: string;
  partner_id: string;
  name: string | null;
  frozen_time: Date;
  status: 'ready' | 'advancing';
  advance_job_id: string | null;
  advance_to: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const CLOCK_COLUMNS = 'test_clock_id, tenant_id, partner_id, name, frozen_time, status, advance_job_id, advance_to, created_at, updated_at';

export function clockToProto(r: ClockRow): TestClock {
  return {
    testClockId: r.test_clock_id,
    ...(r.name !== null ? { name: r.name } : {}),
    frozenTime: iso(r.frozen_time),
    status: r.status,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export const clockAdvancing = (id: string): DomainError =>
  new DomainError('clock_advancing', `test clock ${id} is advancing; retry once its advance has settled`, { retryable: true });

/** A frozenTime as the contract reads it: RFC 3339 with a zone, else 400 naming frozenTime. */
export function parseFrozenTime(s: string): Date {
  const ms = /[Tt]/.test(s) ? parseTimestamp(s) : undefined;
  if (ms === undefined) throw frozenTimeError('must be an RFC 3339 timestamp with a time zone, such as 2027-01-31T00:00:00Z');
  return new Date(ms);
}

export const frozenTimeError = (issue: string): DomainError =>
  new DomainError('validation_error', `frozenTime ${issue}`, { details: [{ field: 'frozenTime', issue }] });

export async function getClock(db: Db, owner: Owner, id: string): Promise<ClockRow | undefined> {
  if (!isTestClockId(id)) return undefined;
  return (
    await db.query<ClockRow>(
      prepared(`SELECT ${CLOCK_COLUMNS} FROM test_clocks WHERE test_clock_id = $1 AND tenant_id = $2 AND partner_id = $3 AND deleted_at IS NULL`, [
        id,
        owner.tenantId,
        owner.partnerId,
      ]),
    )
  ).rows[0];
}

async function lockClock(tx: PoolClient, owner: Owner, id: string): Promise<ClockRow | undefined> {
  if (!isTestClockId(id)) return undefined;
  return (
    await tx.query<ClockRow>(
      `SELECT ${CLOCK_COLUMNS} FROM test_clocks WHERE test_clock_id = $1 AND tenant_id = $2 AND partner_id = $3 AND deleted_at IS NULL FOR UPDATE`,
      [id, owner.tenantId, owner.partnerId],
    )
  ).rows[0];
}

/**
 * The clock a record on `testClockId` reads (quotes, binds, the create job's requirements window):
 * its frozen time (reading it while the clock advances throws clock_advancing). A deleted clock stops moving: its records keep
 * the time it had (null id: the wall clock, undefined: unknown clock).
 */
export async function clockOfRecord(db: Db, testClockId: string | null): Promise<Clock> {
  if (!testClockId) return clockAt(null);
  const r = (await db.query<ClockRow>(prepared(`SELECT ${CLOCK_COLUMNS} FROM test_clocks WHERE test_clock_id = $1`, [testClockId]))).rows[0];
  if (!r) throw new DomainError('unknown_test_clock', `test clock ${testClockId} does not exist`);
  return r.status === 'advancing' ? advancingClock(testClockId) : clockAt(r.frozen_time);
}

/** Creates a clock for the create job (idempotent by job id); limit_exceeded past MAX_LIVE_CLOCKS. */
export async function createClock(pool: Pool, owner: Owner, a: { jobId: string; frozenTime: string; name: string | null }): Promise<ClockRow> {
  if (!a.jobId) throw new DomainError('validation_error', 'job_id is required');
  const frozen = parseFrozenTime(a.frozenTime);
  return withTx(pool, async (tx) => {
    const done = (await tx.query<ClockRow>(prepared(`SELECT ${CLOCK_COLUMNS} FROM test_clocks WHERE create_job_id = $1`, [a.jobId]))).rows[0];
    if (done) return done;
    // Serialize a partner's creates, so two racing ones cannot both be the tenth.
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('test_clocks:' || $1::text || ':' || $2::text))`, [owner.tenantId, owner.partnerId]);
    const live = Number(
      (await tx.query<{ n: string }>(`SELECT count(*) AS n FROM test_clocks WHERE tenant_id = $1 AND partner_id = $2 AND deleted_at IS NULL`, [owner.tenantId, owner.partnerId]))
        .rows[0]!.n,
    );
    if (live >= MAX_LIVE_CLOCKS) {
      throw new DomainError('limit_exceeded', `a partner may hold at most ${MAX_LIVE_CLOCKS} live test clocks; delete one first`);
    }
    return (
      await tx.query<ClockRow>(
        `INSERT INTO test_clocks (test_clock_id, tenant_id, partner_id, name, frozen_time, create_job_id)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${CLOCK_COLUMNS}`,
        [newTestClockId(), owner.tenantId, owner.partnerId, a.name, frozen, a.jobId],
      )
    ).rows[0]!;
  });
}

/** Deletes a clock for the delete job (idempotent by job id); clock_advancing while it advances. */
export async function deleteClock(pool: Pool, owner: Owner, a: { jobId: string; testClockId: string }): Promise<ClockRow> {
  return withTx(pool, async (tx) => {
    const done = (await tx.query<ClockRow>(prepared(`SELECT ${CLOCK_COLUMNS} FROM test_clocks WHERE delete_job_id = $1`, [a.jobId]))).rows[0];
    if (done) return done;
    const c = await lockClock(tx, owner, a.testClockId);
    if (!c) throw notFound('test clock');
    if (c.status === 'advancing') throw clockAdvancing(c.test_clock_id);
    return (
      await tx.query<ClockRow>(
        `UPDATE test_clocks SET deleted_at = date_trunc('milliseconds', now()), delete_job_id = $2, updated_at = date_trunc('milliseconds', now())
          WHERE test_clock_id = $1 RETURNING ${CLOCK_COLUMNS}`,
        [c.test_clock_id, a.jobId],
      )
    ).rows[0]!;
  });
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export interface ClockListArgs {
  limit: number;
  after?: CursorPosition;
}

export function parseClockList(req: { pageSize: number; pageToken: string }, owner: Owner, codec: CursorCodec): ClockListArgs {
  const details: ErrorDetail[] = [];
  const args: ClockListArgs = { limit: DEFAULT_LIMIT };
  if (req.pageSize !== 0) {
    if (Number.isInteger(req.pageSize) && req.pageSize >= 1 && req.pageSize <= MAX_LIMIT) args.limit = req.pageSize;
    else details.push({ field: 'limit', issue: `must be an integer from 1 to ${MAX_LIMIT}` });
  }
  if (req.pageToken !== '') {
    const after = codec.decode(req.pageToken, bindingOf(owner, []));
    if (after) args.after = after;
    else details.push({ field: 'cursor', issue: 'is not a cursor of this listing: pass nextCursor unchanged' });
  }
  if (details.length > 0) throw new DomainError('validation_error', 'invalid list parameters', { details });
  return args;
}

export async function listClocks(db: Db, owner: Owner, args: ClockListArgs, codec: CursorCodec): Promise<{ rows: ClockRow[]; nextCursor: string }> {
  const values: unknown[] = [owner.tenantId, owner.partnerId];
  let after = '';
  if (args.after) {
    values.push(new Date(args.after.createdAtMs).toISOString(), args.after.id);
    after = ` AND (created_at, test_clock_id) < ($3::timestamptz, $4::text)`;
  }
  values.push(args.limit + 1);
  const { rows } = await db.query<ClockRow>(
    prepared(
      `SELECT ${CLOCK_COLUMNS} FROM test_clocks WHERE tenant_id = $1 AND partner_id = $2 AND deleted_at IS NULL${after}
        ORDER BY created_at DESC, test_clock_id DESC LIMIT $${values.length}`,
      values,
    ),
  );
  if (rows.length <= args.limit) return { rows, nextCursor: '' };
  const page = rows.slice(0, args.limit);
  const last = page[page.length - 1]!;
  return { rows: page, nextCursor: codec.encode({ createdAtMs: last.created_at.getTime(), id: last.test_clock_id }, bindingOf(owner, [])) };
}

/**
 * In a bind's transaction, before the quote's lock (the order an advance takes them: clock, then its
 * records): the quote's test clock, held FOR SHARE so no advance begins until the bind commits; read
 * while one runs, it throws clock_advancing. Undefined for a quote on the wall clock.
 */
export async function holdClockOfQuote(tx: PoolClient, quoteId: string): Promise<Clock | undefined> {
  const id = (await tx.query<{ test_clock_id: string | null }>(prepared(`SELECT test_clock_id FROM quotes WHERE quote_id = $1::uuid`, [quoteId.toLowerCase()]))).rows[0]
    ?.test_clock_id;
  if (!id) return undefined;
  const c = (await tx.query<ClockRow>(`SELECT ${CLOCK_COLUMNS} FROM test_clocks WHERE test_clock_id = $1 FOR SHARE`, [id])).rows[0];
  if (!c) return undefined;
  return c.status === 'advancing' ? advancingClock(id) : clockAt(c.frozen_time);
}

/** A clock that refuses to be read (clock_advancing): what a record reads while its clock advances, so a job's own earlier result still answers first. */
export const advancingClock = (id: string): Clock => ({
  now: () => {
    throw clockAdvancing(id);
  },
});
