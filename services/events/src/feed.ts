// Reading the feed: one partner's events after a position, oldest first, and the sweep of events
// past their retention.
import { prepared, type Pool } from '@partner/shared/pg';
import type { Owner } from './cursor.js';

export interface EventRow {
  position: string;
  event_id: string;
  type: string;
  timestamp: Date;
  data: unknown;
}

export interface Page {
  rows: EventRow[];
  /** The highest stored position in the same snapshot as rows (0 when the feed is empty). */
  top: bigint;
  /** Everything at or below this position may have been swept. */
  sweptThrough: bigint;
}

/**
 * One page after `after` (a position). One statement, so one snapshot: the page and the highest
 * stored position agree, and since the single writer commits in position order, every event at or
 * below that position is already visible — a cursor moved there passes nothing that comes later.
 */
export async function readPage(pool: Pool, owner: Owner, after: bigint, types: string[], limit: number): Promise<Page> {
  const r = await pool.query<EventRow & { top: string; swept: string }>(
    prepared(
      `WITH page AS (
         SELECT position, event_id, type, "timestamp", data FROM events
          WHERE tenant_id = $1 AND partner_id = $2 AND position > $3
            AND (cardinality($4::text[]) = 0 OR type = ANY($4::text[]))
          ORDER BY position
          LIMIT $5
       )
       SELECT page.*, (SELECT coalesce(max(position), 0) FROM events) AS top,
              (SELECT swept_through FROM sweep_state WHERE id = 1) AS swept
         FROM (SELECT 1) one LEFT JOIN page ON true
        ORDER BY page.position`,
      [owner.tenantId, owner.partnerId, after.toString(), types, limit],
    ),
  );
  const first = r.rows[0];
  return {
    rows: r.rows.filter((row) => row.position !== null),
    top: BigInt(first?.top ?? 0),
    sweptThrough: BigInt(first?.swept ?? 0),
  };
}

/** The position just before the first event stored at or after `since` (where a `since` read starts). */
export async function positionBefore(pool: Pool, since: Date): Promise<bigint> {
  const r = await pool.query<{ p: string }>(
    prepared('SELECT coalesce(max(position), 0) AS p FROM events WHERE stored_at < $1', [since]),
  );
  return BigInt(r.rows[0]!.p);
}

export async function getEvent(pool: Pool, owner: Owner, eventId: string): Promise<EventRow | undefined> {
  const r = await pool.query<EventRow>(
    prepared(
      `SELECT position, event_id, type, "timestamp", data FROM events WHERE event_id = $1 AND tenant_id = $2 AND partner_id = $3`,
      [eventId, owner.tenantId, owner.partnerId],
    ),
  );
  return r.rows[0];
}

/**
 * Deletes one batch of events stored before the retention cut-off, oldest first, and records the
 * highest position removed (cursors below it are expired). Returns how many were removed.
 */
export async function sweepBatch(pool: Pool, retentionMs: number, batch: number): Promise<number> {
  const r = await pool.query<{ n: string }>(
    `WITH gone AS (
       DELETE FROM events WHERE position IN (
         SELECT position FROM events WHERE stored_at < now() - make_interval(secs => $1::double precision / 1000)
          ORDER BY position LIMIT $2)
       RETURNING position
     ), mark AS (
       UPDATE sweep_state SET swept_through = GREATEST(swept_through, (SELECT max(position) FROM gone))
        WHERE id = 1 AND EXISTS (SELECT 1 FROM gone)
     )
     SELECT count(*) AS n FROM gone`,
    [retentionMs, batch],
  );
  return Number(r.rows[0]?.n ?? 0);
}
