// The dispatcher's SQL: claiming due deliveries (FOR UPDATE SKIP LOCKED, so replicas never claim
// the same one; a claim is a lease that lapses, so a dispatcher that dies mid-send only delays its
// deliveries until the lease ends) and recording each attempt's outcome, only while the lease is
// still the claimer's. Disabling an endpoint records its webhook_endpoint.disabled event in the
// same transaction (the events schema's own event_outbox). Only deliveries of enabled endpoints are
// ever selected. Settling keeps the lock order of webhooks/repo.ts: the endpoint's row before the
// delivery's (successes are settled in batches: all their endpoints first, in endpoint_id order);
// the claim locks deliveries alone but skips what is locked, so it never waits.
import { randomUUID } from 'node:crypto';
import { recordEvent, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import { ASYNC_COMMIT, prepared, withTx, sqlIso, type Pool, type PoolClient } from '@partner/shared/db/pg';
import type { WebhookDisabledReasonName } from '@partner/shared/domain/webhooks';
import { endpointView, failPending, ENDPOINT_COLUMNS, type EndpointRow } from '../webhooks/repo.js';
import { signingSecretsOrNone, type SecretColumns } from '../webhooks/secrets.js';

/**
 * "Its endpoint is enabled", as a scalar subquery: PostgreSQL keeps it a per-row filter of the scan of
 * the partial index on next_attempt_at (which stops after LIMIT rows), where a join would make it read
 * and sort every pending delivery on each claim (measured: fan-out fell from ~660 to ~340 deliveries/s,
 * and to 50/s with hanging endpoints). PostgreSQL cannot estimate that filter (it guesses 0.5 % of the
 * rows), so with a backlog the walk looked dearer than reading every due delivery and sorting them: the
 * dispatcher's pool holds its planner to index walks (shared/db/pg.ts PLANNER_INDEX_WALKS; the test is
 * test/webhook-claim.test.ts).
 */
const ENABLED_ENDPOINT = `(SELECT w.status FROM webhook_endpoints w WHERE w.endpoint_id = d.endpoint_id) = 'enabled'`;

/** A delivery a dispatcher holds: what to send, where, signed with which secrets. */
export interface Claimed {
  lease: string;
  deliveryId: string;
  endpointId: string;
  tenantId: string;
  partnerId: string;
  eventId: string;
  eventType: string;
  body: string;
  /** Failed attempts since it was (re)queued: the retry schedule's step. */
  failures: number;
  url: string;
  /** The secrets that sign: the current one, and the previous one during a rotation's overlap. */
  secrets: string[];
}

/**
 * The claim, one statement: the walk of the due index for four times the limit (candidates: deliveries
 * another dispatcher holds locked leave enough), at most each endpoint's room of them (ranked), then
 * each locked in due order through its primary key, skipping what another claim holds, until `limit`
 * are held (due), and leased. The lock is a LATERAL subquery of its own so that the plan has no other
 * shape: PostgreSQL does not flatten a subquery that locks, so each candidate is looked up by its key.
 * Written as a join, its plan hung on estimates that say "1 row" of every step, and with a backlog it
 * scanned the due index once per candidate (a nested loop the wrong way round: 44,000 rows compared to
 * lock 94) or hashed the whole backlog. Exported for its test (test/webhook-claim.test.ts).
 *
 * It commits without waiting for its WAL flush (ASYNC_COMMIT): a claim lost in a crash of PostgreSQL
 * leaves its deliveries due again, which is what a crash after the POST and before the settlement does
 * anyway (the settlement, a synchronous commit, flushes the claim before it). It takes a disk flush off
 * every delivery's path from commit to receiver.
 */
export const CLAIM = `WITH candidates AS (
       SELECT d.delivery_id, d.endpoint_id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND NOT (d.endpoint_id = ANY($1::text[]))
          AND ${ENABLED_ENDPOINT} AND ${ASYNC_COMMIT}
        ORDER BY d.next_attempt_at
        LIMIT $2 * 4),
     ranked AS (
       SELECT delivery_id, endpoint_id, next_attempt_at, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at) AS rn FROM candidates),
     due AS (
       SELECT l.delivery_id
         FROM (SELECT delivery_id, next_attempt_at FROM ranked
                WHERE rn <= coalesce(($3::jsonb ->> endpoint_id)::int, $4)
                ORDER BY next_attempt_at) r
         CROSS JOIN LATERAL (
           SELECT d.delivery_id FROM webhook_deliveries d
            WHERE d.delivery_id = r.delivery_id AND d.status = 'pending' AND d.next_attempt_at <= now()
            FOR UPDATE SKIP LOCKED) l
        ORDER BY r.next_attempt_at
        LIMIT $2)
     UPDATE webhook_deliveries d
        SET lease = $5, attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $6::double precision / 1000)
       FROM due, webhook_endpoints w
      WHERE d.delivery_id = due.delivery_id AND w.endpoint_id = d.endpoint_id AND w.status = 'enabled'
      RETURNING d.delivery_id, d.endpoint_id, d.tenant_id, d.partner_id, d.event_id, d.event_type, d.body, d.failures, w.url, w.secret_sealed,
                CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_sealed END AS previous_secret_sealed`;

/**
 * Claims up to `limit` due deliveries, at most `room(endpoint)` per endpoint (endpoints absent from
 * `room` get `defaultRoom`; endpoints with no room are skipped), oldest due first. The lease lasts
 * leaseMs: long enough for the deliveries queued behind an endpoint's concurrent sends.
 */
export async function claimDue(
  pool: Pool,
  a: { limit: number; room: Map<string, number>; defaultRoom: number; leaseMs: number; keks: readonly Buffer[]; onSecretError?: (endpointId: string, err: Error) => void },
): Promise<Claimed[]> {
  const lease = randomUUID();
  const full = [...a.room].filter(([, n]) => n <= 0).map(([id]) => id);
  const partial = Object.fromEntries([...a.room].filter(([, n]) => n > 0));
  const r = await pool.query<
    SecretColumns & { delivery_id: string; tenant_id: string; partner_id: string; event_id: string; event_type: string; body: string; failures: number; url: string }
  >(prepared(CLAIM, [full, a.limit, JSON.stringify(partial), a.defaultRoom, lease, a.leaseMs]));
  return r.rows.map((row) => ({
    lease,
    deliveryId: row.delivery_id,
    endpointId: row.endpoint_id,
    tenantId: row.tenant_id,
    partnerId: row.partner_id,
    eventId: row.event_id,
    eventType: row.event_type,
    body: row.body,
    failures: row.failures,
    url: row.url,
    // Sealed at rest (webhooks/secrets.ts): opened here, held only while the delivery is; none when
    // they do not open (the sender refuses that delivery).
    secrets: signingSecretsOrNone(a.keks, row, a.onSecretError && ((err) => a.onSecretError!(row.endpoint_id, err))),
  }));
}

/** Gives back deliveries claimed but not sent (a stopping dispatcher): due again at once. */
export async function release(pool: Pool, held: Claimed[]): Promise<void> {
  if (held.length === 0) return;
  await pool.query(
    `UPDATE webhook_deliveries SET lease = NULL, attempts = attempts - 1, next_attempt_at = now()
      WHERE delivery_id = ANY($1::text[]) AND lease = ANY($2::uuid[])`,
    [held.map((h) => h.deliveryId), [...new Set(held.map((h) => h.lease))]],
  );
}

/** What one attempt came to. */
export interface AttemptOutcome {
  startedAt: Date;
  durationMs: number;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why the attempt failed (no 2xx): a short, partner-readable reason. */
  error?: string;
  /** The first 64 KiB of the answer's body. */
  responseBody?: string;
}

/** Why the dispatcher disables an endpoint (the partner's own reason is set by webhooks/repo.ts). */
export type SystemDisabledReason = Exclude<WebhookDisabledReasonName, 'partner'>;

export type Settled =
  | { kind: 'succeeded' }
  | { kind: 'retry'; at: Date }
  | { kind: 'failed' }
  /** The endpoint was disabled by this attempt: its event to publish once committed. */
  | { kind: 'disabled'; reason: SystemDisabledReason; event: RecordedEvent }
  /** The lease had lapsed (another dispatcher holds the delivery now): nothing recorded. */
  | { kind: 'lost' };

async function recordAttempt(c: PoolClient, d: Claimed, o: AttemptOutcome): Promise<void> {
  await c.query(
    `INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, response_status, error, response_body)
     SELECT $1, attempts, $2, $3, $4, $5, $6 FROM webhook_deliveries WHERE delivery_id = $1
     ON CONFLICT DO NOTHING`,
    [d.deliveryId, o.startedAt, Math.round(o.durationMs), o.status ?? null, o.error ?? null, o.responseBody ?? null],
  );
}

/**
 * Locks the delivery's endpoint (the lock order: endpoint, then delivery) and reads its health; none
 * when it was deleted meanwhile (its deliveries went with it).
 */
async function lockEndpointOf(c: PoolClient, d: Claimed): Promise<{ failing_since: Date | null; status: string } | undefined> {
  const r = await c.query<{ failing_since: Date | null; status: string }>(
    'SELECT failing_since, status FROM webhook_endpoints WHERE endpoint_id = $1 FOR NO KEY UPDATE',
    [d.endpointId],
  );
  return r.rows[0];
}

/** A delivery that succeeded, and its attempt: one item of a batch of settlements. */
export interface Success {
  d: Claimed;
  o: AttemptOutcome;
}

/**
 * Settles a batch of successful attempts (2xx) in one transaction of two statements, whatever its
 * size: the endpoints of the batch are locked first, in endpoint_id order (the lock order of
 * migration 0004, endpoint before its deliveries, kept for several endpoints by taking them in one
 * order: two batches never wait on each other in a cycle, and a transaction holding one endpoint
 * finds none of its deliveries locked by the batch before the batch holds that endpoint); then one
 * statement marks the deliveries succeeded (only those whose lease is still the claimer's), records
 * their attempts and clears the health of those endpoints that were failing. Returns one Settled
 * per item, in order: succeeded, or lost (the lease had lapsed, or the endpoint was deleted).
 */
export async function settleSuccesses(pool: Pool, items: Success[]): Promise<Settled[]> {
  if (items.length === 0) return [];
  const done = await withTx(pool, async (c) => {
    const endpoints = [...new Set(items.map((i) => i.d.endpointId))].sort();
    const locked = await c.query<{ endpoint_id: string; failing: boolean }>(
      prepared(
        `SELECT endpoint_id, failing_since IS NOT NULL AS failing FROM webhook_endpoints
          WHERE endpoint_id = ANY($1::text[]) ORDER BY endpoint_id FOR NO KEY UPDATE`,
        [endpoints],
      ),
    );
    const failing = locked.rows.filter((r) => r.failing).map((r) => r.endpoint_id);
    const r = await c.query<{ delivery_id: string }>(
      prepared(
        `WITH outcome AS (
           SELECT * FROM unnest($1::text[], $2::uuid[], $3::timestamptz[], $4::int[], $5::int[], $6::text[])
                      AS o(delivery_id, lease, started_at, duration_ms, response_status, response_body)),
         settled AS (
           UPDATE webhook_deliveries d
              SET status = 'succeeded', lease = NULL, next_attempt_at = NULL, last_attempt_at = o.started_at,
                  last_response_status = o.response_status, last_error = NULL
             FROM outcome o
            WHERE d.delivery_id = o.delivery_id AND d.lease = o.lease
           RETURNING d.delivery_id, d.endpoint_id, d.attempts, o.started_at, o.duration_ms, o.response_status, o.response_body),
         attempts AS (
           INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, duration_ms, response_status, error, response_body)
           SELECT delivery_id, attempts, started_at, duration_ms, response_status, NULL, response_body FROM settled
           ON CONFLICT DO NOTHING),
         healed AS (
           UPDATE webhook_endpoints w SET failing_since = NULL
            WHERE w.endpoint_id = ANY($7::text[]) AND w.failing_since IS NOT NULL
              AND w.endpoint_id IN (SELECT endpoint_id FROM settled))
         SELECT delivery_id FROM settled`,
        [
          items.map((i) => i.d.deliveryId),
          items.map((i) => i.d.lease),
          items.map((i) => i.o.startedAt),
          items.map((i) => Math.round(i.o.durationMs)),
          items.map((i) => i.o.status ?? null),
          items.map((i) => i.o.responseBody ?? null),
          failing,
        ],
      ),
    );
    return new Set(r.rows.map((row) => row.delivery_id));
  });
  return items.map((i) => (done.has(i.d.deliveryId) ? ({ kind: 'succeeded' } as const) : ({ kind: 'lost' } as const)));
}

/**
 * A failed attempt: retried at `retryAt` (undefined when the schedule is exhausted: the delivery
 * fails). `gone` (a 410) disables the endpoint at once; an endpoint failing for disableAfterMs with
 * no success is disabled too. Either way its pending deliveries fail and the event is recorded.
 */
export async function settleFailure(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  d: Claimed,
  o: AttemptOutcome,
  a: { retryAt: Date | undefined; gone: boolean; disableAfterMs: number },
): Promise<Settled> {
  return withTx(pool, async (c) => {
    const final = a.retryAt === undefined || a.gone;
    // The endpoint first: its health is written below.
    if (!(await lockEndpointOf(c, d))) return { kind: 'lost' } as const;
    const r = await c.query(
      `UPDATE webhook_deliveries
          SET status = $3, lease = NULL, failures = failures + 1, next_attempt_at = $4,
              last_attempt_at = $5, last_response_status = $6, last_error = $7
        WHERE delivery_id = $1 AND lease = $2`,
      [d.deliveryId, d.lease, final ? 'failed' : 'pending', final ? null : a.retryAt, o.startedAt, o.status ?? null, o.error ?? null],
    );
    if (r.rowCount === 0) return { kind: 'lost' } as const;
    await recordAttempt(c, d, o);
    const ep = await c.query<{ failing_since: Date; disable: boolean }>(
      `UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, $2)
        WHERE endpoint_id = $1
        RETURNING failing_since, failing_since < now() - make_interval(secs => $3::double precision / 1000) AS disable`,
      [d.endpointId, o.startedAt, a.disableAfterMs],
    );
    const reason = a.gone ? 'gone' : ep.rows[0]?.disable ? 'failing' : undefined;
    if (reason) {
      const event = await disable(c, names, d, reason);
      if (event) return { kind: 'disabled', reason, event } as const;
    }
    return final ? ({ kind: 'failed' } as const) : ({ kind: 'retry', at: a.retryAt! } as const);
  });
}

/** Disables an enabled endpoint (in the caller's transaction) and records webhook_endpoint.disabled. */
async function disable(c: PoolClient, names: ReturnType<typeof natsNames>, d: Claimed, reason: SystemDisabledReason): Promise<RecordedEvent | undefined> {
  const r = await c.query<EndpointRow & { ts: string }>(
    `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $2, updated_at = date_trunc('milliseconds', now())
      WHERE endpoint_id = $1 AND status = 'enabled'
      RETURNING ${ENDPOINT_COLUMNS}, ${sqlIso('updated_at')} AS ts`,
    [d.endpointId, reason],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  await failPending(c, d.endpointId, reason === 'gone' ? 'the endpoint was disabled: the receiver answered 410 Gone' : 'the endpoint was disabled: it kept failing');
  return recordEvent(c, names, { tenantId: d.tenantId, partnerId: d.partnerId }, 'webhook_endpoint.disabled', row.ts, endpointView(row));
}

/** Backlog figures for the gauges: pending deliveries, how late the most overdue one is, by partner. */
export async function backlog(pool: Pool): Promise<{ pending: number; oldestDueAgeS: number; byPartner: { partner: string; n: number }[] }> {
  const r = await pool.query<{ pending: number; age: number | null }>(
    `SELECT count(*)::int AS pending,
            extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now() AND lease IS NULL))::float8 AS age
       FROM webhook_deliveries WHERE status = 'pending'`,
  );
  const p = await pool.query<{ partner: string; n: number }>(
    `SELECT partner_id AS partner, count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'
      GROUP BY partner_id ORDER BY n DESC LIMIT 11`,
  );
  return { pending: r.rows[0]!.pending, oldestDueAgeS: Math.max(0, r.rows[0]!.age ?? 0), byPartner: p.rows };
}

/**
 * When the earliest delivery this dispatcher could claim is due (or its lease lapses), if there is
 * one: pending, of an enabled endpoint, not of an endpoint whose lane here is full (`full`; a send
 * finishing wakes the loop for those).
 */
export async function nextDue(pool: Pool, full: string[] = []): Promise<Date | undefined> {
  const r = await pool.query<{ at: Date | null }>(
    prepared(
      `SELECT d.next_attempt_at AS at FROM webhook_deliveries d
        WHERE d.status = 'pending' AND NOT (d.endpoint_id = ANY($1::text[])) AND ${ENABLED_ENDPOINT}
        ORDER BY d.next_attempt_at LIMIT 1`,
      [full],
    ),
  );
  return r.rows[0]?.at ?? undefined;
}
