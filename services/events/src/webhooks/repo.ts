// Webhook endpoints and deliveries in PostgreSQL (schema events; migration 0002_webhooks.sql). The
// endpoint mutations run inside jobs and are idempotent by job id: each records its result in
// webhook_job_results in its own transaction, under a lock on the job id, and a second run of the
// same job answers that result. The feed writer queues deliveries in the transaction that stores the
// events (feed_store, migrations/0009_feed_store.sql); the dispatcher (dispatcher/store.ts) claims and settles them.
//
// Lock order (migrations/0004_webhook_lock_order.sql): a transaction that changes existing delivery
// rows locks their endpoint's row first (FOR NO KEY UPDATE; FOR UPDATE to delete it), then the
// deliveries. Only the dispatcher's claim locks deliveries without their endpoint, and it waits for
// nothing (SKIP LOCKED). Rows inserted by the feed writer are new and invisible to everyone else, and
// their foreign-key check (FOR KEY SHARE) does not conflict with FOR NO KEY UPDATE.

import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import type { EventMessage } from '@partner/shared/domain/events';
import { newEventId } from '@partner/shared/domain/events';
import { prefixedIds, type CursorCodec } from '@partner/shared/domain/list-cursor';
import { Conditions, cutPage, pageSizeOf, resolvePage, type Owner } from '@partner/shared/domain/list-page';
import { withTx, sqlIso, type Pool, type PoolClient } from '@partner/shared/db/pg';
import {
  newEndpointId,
  newWebhookSecret,
  PING_EVENT_TYPE,
  type WebhookDeliveryStatusName,
  type WebhookDisabledReasonName,
  type WebhookEndpointStatusName,
  type WebhookEndpointView,
} from '@partner/shared/domain/webhooks';
import { openSecret, sealSecret, secretColumns, type SecretColumns } from './secrets.js';

export const ENDPOINT_IDS = prefixedIds('we');
export const DELIVERY_IDS = prefixedIds('whd');
export const ENDPOINT_CURSOR_CONTEXT = 'partner.events.v1/webhook-endpoints';
export const DELIVERY_CURSOR_CONTEXT = 'partner.events.v1/webhook-deliveries';

export interface EndpointRow {
  endpoint_id: string;
  url: string;
  event_types: string[];
  description: string;
  status: WebhookEndpointStatusName;
  disabled_reason: WebhookDisabledReasonName | null;
  created_at: Date;
  updated_at: Date;
}

export const ENDPOINT_COLUMNS = 'endpoint_id, url, event_types, description, status, disabled_reason, created_at, updated_at';

export function endpointView(r: EndpointRow): WebhookEndpointView {
  return {
    endpointId: r.endpoint_id,
    url: r.url,
    eventTypes: r.event_types,
    description: r.description,
    status: r.status,
    ...(r.disabled_reason ? { disabledReason: r.disabled_reason } : {}),
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export interface DeliveryRow {
  delivery_id: string;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatusName;
  attempts: number;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: Date;
}

const DELIVERY_COLUMNS =
  'delivery_id, event_id, event_type, status, attempts, last_attempt_at, next_attempt_at, last_response_status, last_error, created_at';

/** A delivery's body: the exact bytes sent (and signed) on every attempt. */
export const deliveryBody = (m: EventMessage): string =>
  JSON.stringify({ id: m.event.id, type: m.event.type, timestamp: m.event.timestamp, data: m.event.data ?? null });

// ---------------------------------------------------------------------------------------------
// Endpoint mutations (each a job's effect).

/**
 * Runs fn once per job id: under a transaction-scoped lock on the id, an earlier result is returned
 * as it was; otherwise fn's result is recorded with its change, in one transaction.
 */
async function once<T>(pool: Pool, jobId: string, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  if (!jobId) throw new DomainError('validation_error', 'job_id is required');
  return withTx(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`webhook-job:${jobId}`]);
    const done = await c.query<{ result: T }>('SELECT result FROM webhook_job_results WHERE job_id = $1', [jobId]);
    if (done.rows[0]) return done.rows[0].result;
    const result = await fn(c);
    await c.query('INSERT INTO webhook_job_results (job_id, result) VALUES ($1, $2)', [jobId, JSON.stringify(result)]);
    return result;
  });
}

/** What a job run earlier with this id answered, if it finished. */
async function jobResult<T>(pool: Pool, jobId: string): Promise<T | undefined> {
  if (!jobId) throw new DomainError('validation_error', 'job_id is required');
  const r = await pool.query<{ result: T }>('SELECT result FROM webhook_job_results WHERE job_id = $1', [jobId]);
  return r.rows[0]?.result;
}

/**
 * Locks an endpoint of the owner (the first lock of any transaction that changes it or its
 * deliveries). NO KEY UPDATE does not block the feed writer's foreign-key checks of new deliveries;
 * only deleting the row takes UPDATE.
 */
async function lockEndpoint(c: PoolClient, owner: Owner, endpointId: string, mode: 'NO KEY UPDATE' | 'UPDATE' = 'NO KEY UPDATE'): Promise<EndpointRow & SecretColumns> {
  const r = await c.query<EndpointRow & SecretColumns>(
    `SELECT ${ENDPOINT_COLUMNS}, ${secretColumns()} FROM webhook_endpoints WHERE endpoint_id = $1 AND tenant_id = $2 AND partner_id = $3 FOR ${mode}`,
    [endpointId, owner.tenantId, owner.partnerId],
  );
  if (!r.rows[0]) throw notFound('webhook endpoint');
  return r.rows[0];
}

export async function createEndpoint(
  pool: Pool,
  a: { jobId: string; owner: Owner; url: string; eventTypes: string[]; description: string; secret?: string; limit: number; keks: readonly Buffer[] },
): Promise<WebhookEndpointView> {
  return once(pool, a.jobId, async (c) => {
    // One partner's creations are serialized, so the limit holds under concurrent jobs.
    await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`webhook-endpoints:${JSON.stringify([a.owner.tenantId, a.owner.partnerId])}`]);
    const n = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE tenant_id = $1 AND partner_id = $2', [
      a.owner.tenantId,
      a.owner.partnerId,
    ]);
    if (n.rows[0]!.n >= a.limit) {
      throw new DomainError('limit_exceeded', `a partner may have at most ${a.limit} webhook endpoints; delete one first`);
    }
    // The secret is stored sealed only (webhooks/secrets.ts).
    const endpointId = newEndpointId();
    const r = await c.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (endpoint_id, tenant_id, partner_id, url, event_types, description, secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${ENDPOINT_COLUMNS}`,
      [endpointId, a.owner.tenantId, a.owner.partnerId, a.url, a.eventTypes, a.description, sealSecret(a.keks, endpointId, 'secret', a.secret ?? newWebhookSecret())],
    );
    return endpointView(r.rows[0]!);
  });
}

export interface EndpointChanges {
  url?: string;
  eventTypes?: string[];
  description?: string;
  status?: WebhookEndpointStatusName;
}

export async function updateEndpoint(pool: Pool, a: { jobId: string; owner: Owner; endpointId: string; changes: EndpointChanges }): Promise<WebhookEndpointView> {
  return once(pool, a.jobId, async (c) => {
    const before = await lockEndpoint(c, a.owner, a.endpointId);
    const ch = a.changes;
    const status = ch.status ?? before.status;
    // Disabled by the partner: reason "partner"; enabled again: no reason, and a fresh count of failures.
    const reason = status === 'enabled' ? null : ch.status === 'disabled' && before.status === 'enabled' ? 'partner' : before.disabled_reason;
    const r = await c.query<EndpointRow>(
      `UPDATE webhook_endpoints
          SET url = $2, event_types = $3, description = $4, status = $5, disabled_reason = $6,
              failing_since = CASE WHEN $5 = 'enabled' AND status = 'disabled' THEN NULL ELSE failing_since END,
              updated_at = date_trunc('milliseconds', now())
        WHERE endpoint_id = $1
        RETURNING ${ENDPOINT_COLUMNS}`,
      [a.endpointId, ch.url ?? before.url, ch.eventTypes ?? before.event_types, ch.description ?? before.description, status, reason],
    );
    if (status === 'disabled' && before.status === 'enabled') await failPending(c, a.endpointId, 'the endpoint was disabled by the partner');
    return endpointView(r.rows[0]!);
  });
}

/**
 * Pending deliveries of an endpoint that was disabled end as failed, with the reason (recover sends
 * them again). The caller holds the endpoint's lock.
 */
export async function failPending(c: PoolClient, endpointId: string, why: string): Promise<void> {
  await c.query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease = NULL, last_error = coalesce(last_error || '; ', '') || $2
      WHERE endpoint_id = $1 AND status = 'pending'`,
    [endpointId, why],
  );
}

export async function deleteEndpoint(pool: Pool, a: { jobId: string; owner: Owner; endpointId: string }): Promise<{ endpointId: string }> {
  return once(pool, a.jobId, async (c) => {
    // Endpoint first, then (the cascade) its deliveries and their attempts.
    await lockEndpoint(c, a.owner, a.endpointId, 'UPDATE');
    await c.query('DELETE FROM webhook_endpoints WHERE endpoint_id = $1', [a.endpointId]);
    return { endpointId: a.endpointId };
  });
}

export async function rotateSecret(
  pool: Pool,
  a: { jobId: string; owner: Owner; endpointId: string; overlapMs: number; keks: readonly Buffer[] },
): Promise<{ endpointId: string; rotatedAt: string; previousSecretExpiresAt: string }> {
  return once(pool, a.jobId, async (c) => {
    const ep = await lockEndpoint(c, a.owner, a.endpointId);
    // The current secret becomes the previous one: opened, and sealed again for its new column.
    const current = openSecret(a.keks, a.endpointId, 'secret', ep.secret_sealed);
    if (current === null) throw new Error(`webhook endpoint ${a.endpointId} has no signing secret`);
    const r = await c.query<{ rotated_at: Date; expires: Date }>(
      `UPDATE webhook_endpoints
          SET previous_secret_sealed = $4, secret_sealed = $2,
              previous_secret_expires_at = date_trunc('milliseconds', now()) + make_interval(secs => $3::double precision / 1000),
              updated_at = date_trunc('milliseconds', now())
        WHERE endpoint_id = $1
        RETURNING updated_at AS rotated_at, previous_secret_expires_at AS expires`,
      [a.endpointId, sealSecret(a.keks, a.endpointId, 'secret', newWebhookSecret()), a.overlapMs, sealSecret(a.keks, a.endpointId, 'previous_secret', current)],
    );
    return { endpointId: a.endpointId, rotatedAt: r.rows[0]!.rotated_at.toISOString(), previousSecretExpiresAt: r.rows[0]!.expires.toISOString() };
  });
}

/** Events recover queues per transaction: each batch holds the endpoint's lock for milliseconds. */
export const RECOVER_BATCH = 500;

/**
 * Enables the endpoint if it was disabled (one short transaction), then queues every stored event of
 * the partner since `since` that it subscribes to — a new delivery, or its earlier one queued again
 * (the same webhook-id, a fresh retry schedule) — in batches of RECOVER_BATCH events in feed order,
 * each its own transaction, up to the feed's top when it started (later events get their deliveries
 * from the feed writer: the endpoint is enabled by then). The dispatcher settles deliveries between
 * batches, so it never waits on a long rewrite. Idempotent by job id like the other changes (a
 * redelivered job that had not finished runs again; queueing again is harmless: at least once).
 */
export async function recoverEndpoint(
  pool: Pool,
  a: { jobId: string; owner: Owner; endpointId: string; since: string; batch?: number },
): Promise<{ endpointId: string; since: string; queued: number }> {
  const earlier = await jobResult<{ endpointId: string; since: string; queued: number }>(pool, a.jobId);
  if (earlier) return earlier;
  const types = await withTx(pool, async (c) => {
    const ep = await lockEndpoint(c, a.owner, a.endpointId);
    if (ep.status === 'disabled') {
      await c.query(
        `UPDATE webhook_endpoints SET status = 'enabled', disabled_reason = NULL, failing_since = NULL, updated_at = date_trunc('milliseconds', now())
          WHERE endpoint_id = $1`,
        [a.endpointId],
      );
    }
    return ep.event_types;
  });
  const top = (await pool.query<{ p: string }>('SELECT coalesce(max(position), 0)::text AS p FROM events')).rows[0]!.p;
  const size = a.batch ?? RECOVER_BATCH;
  let after = '0';
  let queued = 0;
  for (;;) {
    const b = await withTx(pool, async (c) => {
      // The lock order: the endpoint before its deliveries (for this batch only).
      const ep = await c.query('SELECT 1 FROM webhook_endpoints WHERE endpoint_id = $1 FOR NO KEY UPDATE', [a.endpointId]);
      if (!ep.rows[0]) throw notFound('webhook endpoint');
      const r = await c.query<{ last: string | null; n: number; queued: number }>(
        `WITH batch AS (
           SELECT e.position, e.event_id, e.tenant_id, e.partner_id, e.type,
                  jsonb_build_object('id', e.event_id, 'type', e.type, 'timestamp', ${sqlIso('e."timestamp"')}, 'data', e.data)::text AS body
             FROM events e
            WHERE e.tenant_id = $2 AND e.partner_id = $3 AND e.position > $6::bigint AND e.position <= $7::bigint
              AND e."timestamp" >= $4::timestamptz AND (e.type = ANY($5::text[]) OR '*' = ANY($5::text[]))
            ORDER BY e.position
            LIMIT $8),
         queued AS (
           INSERT INTO webhook_deliveries (delivery_id, endpoint_id, tenant_id, partner_id, event_id, event_type, body, next_attempt_at)
           SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), $1, b.tenant_id, b.partner_id, b.event_id, b.type, b.body, now()
             FROM batch b ORDER BY b.position
           ON CONFLICT (endpoint_id, event_id) DO UPDATE
              SET status = 'pending', failures = 0, next_attempt_at = now(), lease = NULL
            WHERE webhook_deliveries.status <> 'pending'
           RETURNING 1)
         SELECT (SELECT max(position) FROM batch)::text AS last, (SELECT count(*) FROM batch)::int AS n, (SELECT count(*) FROM queued)::int AS queued`,
        [a.endpointId, a.owner.tenantId, a.owner.partnerId, a.since, types, after, top, size],
      );
      return r.rows[0]!;
    });
    queued += b.queued;
    if (b.n < size || b.last === null) break;
    after = b.last;
  }
  return once(pool, a.jobId, async () => ({ endpointId: a.endpointId, since: a.since, queued }));
}

/** Queues a webhook_endpoint.ping to an enabled endpoint; a disabled one fails the job (409 conflict). */
export async function pingEndpoint(pool: Pool, a: { jobId: string; owner: Owner; endpointId: string }): Promise<{ endpointId: string; eventId: string }> {
  return once(pool, a.jobId, async (c) => {
    const ep = await lockEndpoint(c, a.owner, a.endpointId);
    if (ep.status !== 'enabled') {
      throw new DomainError(
        'conflict',
        `the webhook endpoint is ${ep.status}${ep.disabled_reason ? ` (reason: ${ep.disabled_reason})` : ''}: only an enabled endpoint can be pinged; enable it (PATCH status "enabled") or recover it first`,
      );
    }
    const eventId = newEventId();
    const body = JSON.stringify({ id: eventId, type: PING_EVENT_TYPE, timestamp: new Date().toISOString(), data: { endpointId: a.endpointId } });
    await c.query(
      `INSERT INTO webhook_deliveries (delivery_id, endpoint_id, tenant_id, partner_id, event_id, event_type, body, next_attempt_at)
       VALUES ('whd_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, $4, $5, $6, now())`,
      [a.endpointId, a.owner.tenantId, a.owner.partnerId, eventId, PING_EVENT_TYPE, body],
    );
    return { endpointId: a.endpointId, eventId };
  });
}

// ---------------------------------------------------------------------------------------------
// Reads.

export async function getEndpoint(pool: Pool, owner: Owner, endpointId: string): Promise<EndpointRow> {
  const r = await pool.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE endpoint_id = $1 AND tenant_id = $2 AND partner_id = $3`, [
    endpointId,
    owner.tenantId,
    owner.partnerId,
  ]);
  if (!r.rows[0]) throw notFound('webhook endpoint');
  return r.rows[0];
}

export async function getSecret(pool: Pool, owner: Owner, endpointId: string, keks: readonly Buffer[]): Promise<string> {
  const r = await pool.query<SecretColumns>(`SELECT endpoint_id, ${secretColumns()} FROM webhook_endpoints WHERE endpoint_id = $1 AND tenant_id = $2 AND partner_id = $3`, [
    endpointId,
    owner.tenantId,
    owner.partnerId,
  ]);
  const row = r.rows[0];
  if (!row) throw notFound('webhook endpoint');
  const secret = openSecret(keks, endpointId, 'secret', row.secret_sealed);
  if (secret === null) throw new Error(`webhook endpoint ${endpointId} has no signing secret`);
  return secret;
}

export async function listEndpoints(
  pool: Pool,
  a: { owner: Owner; pageToken: string; pageSize: number },
  codec: CursorCodec,
): Promise<{ rows: EndpointRow[]; nextCursor: string }> {
  const details: ErrorDetail[] = [];
  const limit = pageSizeOf(a.pageSize, details);
  const after = resolvePage(a.pageToken, a.owner, [], codec, details);
  const q = new Conditions(a.owner).after(after, 'endpoint_id', 'text').query(ENDPOINT_COLUMNS, 'webhook_endpoints', 'endpoint_id', limit);
  const { rows } = await pool.query<EndpointRow>(q.text, q.values);
  return cutPage(rows, limit, (r) => r.endpoint_id, a.owner, [], codec);
}

export async function listDeliveries(
  pool: Pool,
  a: { owner: Owner; endpointId: string; pageToken: string; pageSize: number; status: WebhookDeliveryStatusName | undefined; eventId: string },
  codec: CursorCodec,
): Promise<{ rows: DeliveryRow[]; nextCursor: string }> {
  await getEndpoint(pool, a.owner, a.endpointId);
  const details: ErrorDetail[] = [];
  const limit = pageSizeOf(a.pageSize, details);
  const filters = [a.endpointId, a.status, a.eventId || undefined];
  const after = resolvePage(a.pageToken, a.owner, filters, codec, details);
  const c = new Conditions(a.owner).add((p) => `endpoint_id = ${p}`, a.endpointId);
  if (a.status) c.add((p) => `status = ${p}`, a.status);
  if (a.eventId) c.add((p) => `event_id = ${p}`, a.eventId);
  const q = c.after(after, 'delivery_id', 'text').query(DELIVERY_COLUMNS, 'webhook_deliveries', 'delivery_id', limit);
  const { rows } = await pool.query<DeliveryRow>(q.text, q.values);
  return cutPage(rows, limit, (r) => r.delivery_id, a.owner, filters, codec);
}
