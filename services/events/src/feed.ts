// Reading the feed: one partner's events after a position, oldest first, and the sweep of events
// past their retention.
import { prepared, type Pool } from '@partner/shared/db/pg';
import type { Owner } from './cursor.js';

export interface EventRow {
  partner_seq: string;
  event_id: string;
  type: string;
  timestamp: Date;
  /**
   * The event's data as PostgreSQL prints the jsonb (data::text): passed on as it is, not parsed here
   * and serialised again (that pair was a quarter of the events service's CPU for a page of 100;
   * docs/performance.md, "Reads"). The gateway parses it once for the response.
   */
  data_json: string;
}

/**
 * An event as ListEvents returns it: the one serializer of a stored row, for pages and for the events
 * a feed wake-up carries (writer.ts), so the two cannot differ.
 */
export const toEvent = (r: Pick<EventRow, 'event_id' | 'type' | 'timestamp' | 'data_json'>) => ({
  id: r.event_id,
  type: r.type,
  timestamp: r.timestamp.toISOString(),
  dataJson: r.data_json,
});

export interface Page {
  rows: EventRow[];
  /** The partner's highest partner_seq in the same snapshot as rows (0 when it has none). */
  head: bigint;
  /** Everything of this partner at or below this partner_seq may have been swept. */
  sweptThrough: bigint;
}

/**
 * One page of the partner's feed after `after` (a partner_seq). One statement, so one snapshot: the
 * page and the partner's head agree, and since the writer assigns a partner's sequence under the
 * lock of its feed_heads row and commits in that order, every event of the partner at or below the
 * head is already visible — a cursor moved there passes nothing that comes later. Nothing here
 * reads another partner's rows.
 */
export async function readPage(pool: Pool, owner: Owner, after: bigint, types: string[], limit: number): Promise<Page> {
  const r = await pool.query<EventRow & { head: string | null; swept: string | null }>(
    prepared(
      `WITH page AS (
         SELECT partner_seq, event_id, type, "timestamp", data::text AS data_json FROM events
          WHERE tenant_id = $1 AND partner_id = $2 AND partner_seq > $3
            AND (cardinality($4::text[]) = 0 OR type = ANY($4::text[]))
          ORDER BY partner_seq
          LIMIT $5
       )
       SELECT page.*, h.seq AS head, h.swept_through AS swept
         FROM (SELECT 1) one
         LEFT JOIN feed_heads h ON h.tenant_id = $1 AND h.partner_id = $2
         LEFT JOIN page ON true
        ORDER BY page.partner_seq`,
      [owner.tenantId, owner.partnerId, after.toString(), types, limit],
    ),
  );
  const first = r.rows[0];
  return {
    rows: r.rows.filter((row) => row.partner_seq !== null),
    head: BigInt(first?.head ?? 0),
    sweptThrough: BigInt(first?.swept ?? 0),
  };
}

/** The partner's position just before its first event stored at or after `since` (where a `since` read starts). */
export async function seqBefore(pool: Pool, owner: Owner, since: Date): Promise<bigint> {
  const r = await pool.query<{ s: string }>(
    prepared(
      `SELECT coalesce(max(partner_seq), 0) AS s FROM events WHERE tenant_id = $1 AND partner_id = $2 AND stored_at < $3`,
      [owner.tenantId, owner.partnerId, since],
    ),
  );
  return BigInt(r.rows[0]!.s);
}

/**
 * Where a version 1 cursor (a global position, issued before per-partner positions) stands in the
 * partner's own sequence: the partner_seq of its last event at or below that position. Undefined
 * when the cursor is expired: judged as version 1 judged it, against the global sweep mark. Past
 * that mark every swept event lies at or below the position, so the partner's swept_through counts
 * among its events there even when none of them is left.
 */
export async function seqAtPosition(pool: Pool, owner: Owner, position: bigint): Promise<bigint | undefined> {
  const r = await pool.query<{ s: string; global_swept: string }>(
    prepared(
      `SELECT GREATEST(
                coalesce((SELECT max(partner_seq) FROM events WHERE tenant_id = $1 AND partner_id = $2 AND position <= $3), 0),
                coalesce((SELECT swept_through FROM feed_heads WHERE tenant_id = $1 AND partner_id = $2), 0)) AS s,
              (SELECT swept_through FROM sweep_state WHERE id = 1) AS global_swept`,
      [owner.tenantId, owner.partnerId, position.toString()],
    ),
  );
  const row = r.rows[0]!;
  return position < BigInt(row.global_swept) ? undefined : BigInt(row.s);
}

export async function getEvent(pool: Pool, owner: Owner, eventId: string): Promise<EventRow | undefined> {
  const r = await pool.query<EventRow>(
    prepared(
      `SELECT partner_seq, event_id, type, "timestamp", data::text AS data_json FROM events WHERE event_id = $1 AND tenant_id = $2 AND partner_id = $3`,
      [eventId, owner.tenantId, owner.partnerId],
    ),
  );
  return r.rows[0];
}

/**
 * Deletes one batch of events stored before the retention cut-off, oldest first, and records per
 * partner the highest partner_seq removed (that partner's cursors below it are expired), and the
 * highest global position removed (for cursors of version 1). Returns how many were removed.
 * feed_heads rows are locked in (tenant_id, partner_id) order, as the writer locks them.
 */
export async function sweepBatch(pool: Pool, retentionMs: number, batch: number): Promise<number> {
  const r = await pool.query<{ n: string }>(
    `WITH gone AS (
       DELETE FROM events WHERE position IN (
         SELECT position FROM events WHERE stored_at < now() - make_interval(secs => $1::double precision / 1000)
          ORDER BY position LIMIT $2)
       RETURNING position, tenant_id, partner_id, partner_seq
     ), heads AS (
       INSERT INTO feed_heads AS h (tenant_id, partner_id, seq, swept_through)
       SELECT tenant_id, partner_id, max(partner_seq), max(partner_seq) FROM gone
        GROUP BY tenant_id, partner_id ORDER BY tenant_id, partner_id
       ON CONFLICT (tenant_id, partner_id) DO UPDATE SET swept_through = GREATEST(h.swept_through, EXCLUDED.swept_through)
     ), mark AS (
       UPDATE sweep_state SET swept_through = GREATEST(swept_through, (SELECT max(position) FROM gone))
        WHERE id = 1 AND EXISTS (SELECT 1 FROM gone)
     )
     SELECT count(*) AS n FROM gone`,
    [retentionMs, batch],
  );
  return Number(r.rows[0]?.n ?? 0);
}
