// The request log's day partitions (migration 0007): request_log_pYYYYMMDD holds [day, day + 1) in
// UTC. The partition job creates today's and the next days' ahead of the writer, and drops every
// partition whose whole day is older than the retention (a DROP of the partition, no row deletes, no
// vacuum debt). The writer also creates a day it meets that is missing (a clock ahead, a job that
// has not run yet). "Now" comes from the clock (shared/domain/clock.ts).
import type { Pool } from '@partner/shared/db/pg';
import type { Clock } from '@partner/shared/domain/clock';

const DAY_MS = 24 * 3_600_000;
const PARTITION = /^request_log_p(\d{4})(\d{2})(\d{2})$/;

/** The start (epoch ms, UTC midnight) of the day holding `ms`. */
export const dayStart = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/** The partition name of the day starting at `dayMs`. */
export function partitionName(dayMs: number): string {
  const d = new Date(dayMs);
  const p = (n: number) => String(n).padStart(2, '0');
  return `request_log_p${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}`;
}

/** The day (epoch ms) a partition name holds, or undefined when it is not one of ours. */
export function partitionDay(name: string): number | undefined {
  const m = PARTITION.exec(name);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : undefined;
}

/** The partitions of request_log, by name. */
export async function listPartitions(pool: Pool): Promise<string[]> {
  const r = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_class p ON p.oid = i.inhparent
       JOIN pg_namespace n ON n.oid = p.relnamespace
      WHERE p.relname = 'request_log' AND n.nspname = current_schema()
      ORDER BY 1`,
  );
  return r.rows.map((row) => row.name);
}

/** Creates the partition of each day (epoch ms of its start) that is missing; returns those it created. */
export async function ensurePartitions(pool: Pool, days: Iterable<number>): Promise<string[]> {
  const created: string[] = [];
  for (const day of new Set([...days].map(dayStart))) {
    const name = partitionName(day);
    const from = new Date(day).toISOString();
    const to = new Date(day + DAY_MS).toISOString();
    try {
      // IF NOT EXISTS: replicas (and the writer beside the job) may race to create the same day.
      const r = await pool.query(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF request_log FOR VALUES FROM ('${from}') TO ('${to}')`);
      if (r.command === 'CREATE') created.push(name);
    } catch (err) {
      // Two creators of one day at once: the loser's catalog insert collides; the day exists.
      if (!/already exists|duplicate key/i.test((err as Error).message)) throw err;
    }
  }
  return created;
}

/** Drops the partitions whose whole day ended at least `retentionMs` before now; returns their names. */
export async function dropExpired(pool: Pool, now: Date, retentionMs: number): Promise<string[]> {
  const cutoff = now.getTime() - retentionMs;
  const dropped: string[] = [];
  for (const name of await listPartitions(pool)) {
    const day = partitionDay(name);
    if (day === undefined || day + DAY_MS > cutoff) continue;
    await pool.query(`DROP TABLE IF EXISTS ${name}`);
    dropped.push(name);
  }
  return dropped;
}

export interface PartitionJobResult {
  created: string[];
  dropped: string[];
  partitions: number;
}

/** One pass of the partition job: today and `aheadDays` more created, the expired dropped. */
export async function maintainPartitions(pool: Pool, clock: Clock, opts: { retentionMs: number; aheadDays: number }): Promise<PartitionJobResult> {
  const today = dayStart(clock.now().getTime());
  const created = await ensurePartitions(pool, Array.from({ length: opts.aheadDays + 1 }, (_, i) => today + i * DAY_MS));
  const dropped = await dropExpired(pool, clock.now(), opts.retentionMs);
  return { created, dropped, partitions: (await listPartitions(pool)).length };
}
