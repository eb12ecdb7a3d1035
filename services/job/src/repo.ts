// Data access for the job schema: submitting (with idempotency and outbox, one transaction),
// reading, starting and settling jobs, and the sweeps.
import { DomainError } from '@partner/shared/errors';
import { withTx, dbError, prepared, type Pool } from '@partner/shared/pg';
import { newEventId, outboxInsertSql, sqlIso, type RecordedEvent } from '@partner/shared/events';
import type { natsNames } from '@partner/shared/nats';
import type { Job, JobError } from '@partner/shared/proto-types';
import { JOB_STATUS, type JobStatusName } from '@partner/shared/jobs';

export interface JobRow {
  job_id: string;
  kind: string;
  tenant_id: string;
  partner_id: string;
  client_id: string;
  principal_id: string | null;
  /** Read only where it is needed (StartJob); absent otherwise. */
  payload?: unknown;
  status: JobStatusName;
  result: unknown;
  error: { code: string; message: string; retryable: boolean } | null;
  deliveries: number;
  created_at: Date;
  updated_at: Date;
}

/** A job as replies and events show it: everything but the payload, which only StartJob returns. */
const COLUMNS = `job_id, kind, tenant_id, partner_id, client_id, principal_id, status, result, error,
                 deliveries, created_at, updated_at`;
const COLUMNS_WITH_PAYLOAD = `${COLUMNS}, payload`;
export const LIST_COLUMNS = COLUMNS;

export function toProto(row: JobRow, withPayload = false): Job {
  return {
    id: row.job_id,
    kind: row.kind,
    status: JOB_STATUS.toProto(row.status),
    resultJson: row.result === null || row.result === undefined ? '' : JSON.stringify(row.result),
    error: row.error ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    payloadJson: withPayload ? JSON.stringify(row.payload) : '',
    caller: {
      tenantId: row.tenant_id,
      partnerId: row.partner_id,
      clientId: row.client_id,
      principalId: row.principal_id ?? '',
    },
  };
}

// One statement, so one round trip and one commit: claim the key (or reclaim an expired one), insert
// the job and its outbox row. A live key claims nothing, so nothing is inserted and the statement
// returns no row. Concurrent requests with one key serialize on the key's primary key: the loser's
// INSERT waits for the winner's commit, then finds the key taken.
const SUBMIT_WITH_KEY = `WITH claimed AS (
     INSERT INTO idempotency_keys (tenant_id, partner_id, client_id, scope, key, fingerprint, job_id, expires_at)
     VALUES ($1, $2, $3, $10, $11, $12, $4, now() + make_interval(hours => $13))
     ON CONFLICT (tenant_id, partner_id, client_id, scope, key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, job_id = EXCLUDED.job_id,
            created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE idempotency_keys.expires_at <= now()
     RETURNING job_id
   ), job AS (
     INSERT INTO jobs (job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, status)
     SELECT $4::text, $5::text, $1::text, $2::text, $3::text, $6::text, $7::jsonb, 'accepted' FROM claimed
     RETURNING ${COLUMNS}
   ), queued AS (
     INSERT INTO outbox (job_id, subject, trace_context) SELECT job_id, $8::text, $9::jsonb FROM job RETURNING id
   )
   SELECT job.*, (SELECT id FROM queued) AS outbox_id FROM job`;

const SUBMIT_WITHOUT_KEY = `WITH job AS (
     INSERT INTO jobs (job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, status)
     VALUES ($4, $5, $1, $2, $3, $6, $7, 'accepted')
     RETURNING ${COLUMNS}
   ), queued AS (
     INSERT INTO outbox (job_id, subject, trace_context) SELECT job_id, $8::text, $9::jsonb FROM job RETURNING id
   )
   SELECT job.*, (SELECT id FROM queued) AS outbox_id FROM job`;

/** A live key: the job it points to, and the fingerprint of the request that claimed it. */
const REPLAY = `SELECT k.fingerprint, ${COLUMNS.split(',').map((c) => `j.${c.trim()}`).join(', ')}
     FROM idempotency_keys k JOIN jobs j ON j.job_id = k.job_id
    WHERE k.tenant_id = $1 AND k.partner_id = $2 AND k.client_id = $3 AND k.scope = $4 AND k.key = $5`;

export interface SubmitInput {
  jobId: string;
  kind: string;
  subject: string;
  tenantId: string;
  partnerId: string;
  clientId: string;
  principalId: string | null;
  /** The job's input, JSON text (already checked to parse). */
  payloadJson: string;
  idempotency?: { key: string; scope: string; fingerprint: string };
  retentionHours: number;
  /** The submitting request's trace context (traceparent, tracestate), kept with the outbox row. */
  traceContext?: Record<string, string>;
}

/**
 * Records the job, its idempotency key and its outbox row in one transaction. With a live key
 * already taken, returns the job it points to (replayed) or refuses a different request under it.
 * Concurrent requests with one key serialize on the key's primary key: exactly one job results.
 */
export async function submitJob(pool: Pool, input: SubmitInput): Promise<{ row: JobRow; replayed: boolean; outboxId?: string }> {
  const trace = input.traceContext && Object.keys(input.traceContext).length > 0 ? JSON.stringify(input.traceContext) : null;
  const common = [input.tenantId, input.partnerId, input.clientId, input.jobId, input.kind, input.principalId, input.payloadJson, input.subject, trace];
  const inserted = await pool
    .query<JobRow & { outbox_id: string }>(
      input.idempotency
        ? prepared(SUBMIT_WITH_KEY, [...common, input.idempotency.scope, input.idempotency.key, input.idempotency.fingerprint, input.retentionHours])
        : prepared(SUBMIT_WITHOUT_KEY, common),
    )
    .catch(dbError);
  const created = inserted.rows[0];
  if (created) {
    const { outbox_id: outboxId, ...row } = created;
    return { row, replayed: false, outboxId };
  }

  // The key is live: the same request gets its job back, a different one is refused.
  const { key, scope, fingerprint } = input.idempotency!;
  const existing = await pool
    .query<JobRow & { fingerprint: string }>(prepared(REPLAY, [input.tenantId, input.partnerId, input.clientId, scope, key]))
    .catch(dbError);
  const hit = existing.rows[0];
  if (!hit) throw new DomainError('unavailable', 'idempotency key changed concurrently; retry', { retryable: true });
  if (hit.fingerprint !== fingerprint) {
    throw new DomainError(
      'idempotency_key_reused',
      'this Idempotency-Key was already used with a different request; use a new key for a new request',
    );
  }
  const { fingerprint: _ignored, ...row } = hit;
  return { row, replayed: true };
}

export async function getJob(
  pool: Pool,
  jobId: string,
  scope?: { tenantId: string; partnerId: string },
  columns = COLUMNS,
): Promise<JobRow | undefined> {
  const r = scope
    ? await pool.query<JobRow>(prepared(`SELECT ${columns} FROM jobs WHERE job_id = $1 AND tenant_id = $2 AND partner_id = $3`, [jobId, scope.tenantId, scope.partnerId]))
    : await pool.query<JobRow>(prepared(`SELECT ${columns} FROM jobs WHERE job_id = $1`, [jobId]));
  return r.rows[0];
}

/** Marks an unsettled job running (counting the delivery); returns the job as it then is. */
export async function startJob(pool: Pool, jobId: string, delivery: number): Promise<JobRow | undefined> {
  const r = await pool.query<JobRow>(
    prepared(
      `UPDATE jobs SET status = 'running', deliveries = GREATEST(deliveries, $2),
              updated_at = date_trunc('milliseconds', clock_timestamp())
        WHERE job_id = $1 AND status IN ('accepted', 'running')
        RETURNING ${COLUMNS_WITH_PAYLOAD}`,
      [jobId, delivery],
    ),
  );
  return r.rows[0] ?? (await getJob(pool, jobId, undefined, COLUMNS_WITH_PAYLOAD));
}

// One statement, so one round trip and one commit: settle the job if it is unsettled, and record its
// event (job.succeeded / job.failed) in event_outbox. The event's data is the job as GET /v1/jobs/{id}
// shows it, with its kind (timestamps as the API prints them; both columns are whole milliseconds).
const SETTLE = `WITH settled AS (
     UPDATE jobs SET status = $2, result = $3, error = $4, settled_at = now(), deliveries = GREATEST(deliveries, $5),
            updated_at = date_trunc('milliseconds', clock_timestamp())
      WHERE job_id = $1 AND status IN ('accepted', 'running')
      RETURNING ${COLUMNS}
   ), event AS (
     ${outboxInsertSql({
       source: 'settled',
       eventId: '$6',
       subject: '$7',
       type: '$8',
       timestampSql: sqlIso('s.updated_at'),
       dataSql: `jsonb_build_object('id', s.job_id, 'kind', s.kind, 'status', s.status,
                                    'createdAt', ${sqlIso('s.created_at')}, 'updatedAt', ${sqlIso('s.updated_at')})
                 || CASE WHEN s.status = 'succeeded' THEN jsonb_build_object('result', s.result)
                         ELSE jsonb_build_object('error', s.error) END`,
     })}
   )
   SELECT settled.*, event.id AS outbox_id, event.body AS event_body FROM settled, event`;

/**
 * Settles an unsettled job, and records its event (job.succeeded / job.failed) in the same
 * statement. Exactly once: the UPDATE only matches an unsettled row, so of two concurrent
 * settlements one wins and the other gets the settled job back with settledNow=false (and no event).
 */
export async function settleJob(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  jobId: string,
  outcome: { resultJson: string } | { error: JobError },
  delivery = 0,
): Promise<{ row: JobRow; settledNow: boolean; event?: RecordedEvent } | undefined> {
  const isResult = 'resultJson' in outcome;
  const type = isResult ? 'job.succeeded' : 'job.failed';
  const eventId = newEventId();
  const subject = names.eventSubject(type);
  const r = await pool.query<JobRow & { outbox_id: string; event_body: string }>(
    prepared(SETTLE, [
      jobId,
      isResult ? 'succeeded' : 'failed',
      isResult ? outcome.resultJson : null,
      isResult ? null : JSON.stringify({ code: outcome.error.code, message: outcome.error.message, retryable: !!outcome.error.retryable }),
      delivery,
      eventId,
      subject,
      type,
    ]),
  );
  const settled = r.rows[0];
  if (settled) {
    const { outbox_id: outboxId, event_body: body, ...row } = settled;
    return { row, settledNow: true, event: { outboxId, msgId: eventId, subject, body } };
  }
  const existing = await getJob(pool, jobId);
  return existing ? { row: existing, settledNow: false } : undefined;
}

/** Removes idempotency keys past their retention. */
export async function sweepIdempotencyKeys(pool: Pool): Promise<number> {
  const r = await pool.query('DELETE FROM idempotency_keys WHERE expires_at <= now()');
  return r.rowCount ?? 0;
}

/**
 * Queues again the unsettled jobs nobody has touched for staleAfterMs and that have no outbox row:
 * their JetStream message was lost (a purged stream, a broker that lost its disk). The worker's
 * effects are idempotent by job id, so a second delivery is harmless.
 */
export async function requeueStaleJobs(pool: Pool, staleAfterMs: number, subjectOf: (kind: string) => string): Promise<number> {
  return withTx(pool, async (c) => {
    const stale = await c.query<{ job_id: string; kind: string }>(
      `SELECT j.job_id, j.kind FROM jobs j
        WHERE j.status IN ('accepted', 'running')
          AND j.updated_at < now() - make_interval(secs => $1::double precision / 1000)
          AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = j.job_id)
        ORDER BY j.updated_at
        LIMIT 500
        FOR UPDATE SKIP LOCKED`,
      [staleAfterMs],
    );
    for (const s of stale.rows) {
      await c.query('INSERT INTO outbox (job_id, subject) VALUES ($1, $2)', [s.job_id, subjectOf(s.kind)]);
      await c.query("UPDATE jobs SET updated_at = date_trunc('milliseconds', clock_timestamp()) WHERE job_id = $1", [s.job_id]);
    }
    return stale.rowCount ?? 0;
  }).catch(dbError);
}

/**
 * What the outbox relay reads of a job's outbox row: the job id as the message id and, as the body,
 * the id alone (a row the loop publishes was missed by the fast path; the worker reads the job first).
 */
export const OUTBOX_RELAY_COLUMNS = `id, job_id AS msg_id, subject, json_build_object('jobId', job_id)::text AS body, trace_context`;

/** Rows waiting in the outbox, and the age in seconds of the oldest (0 when empty). */
export async function outboxBacklog(pool: Pool): Promise<{ n: number; age: number }> {
  const r = await pool.query<{ n: string; age: string | null }>('SELECT count(*) AS n, extract(epoch FROM now() - min(created_at)) AS age FROM outbox');
  return { n: Number(r.rows[0]?.n ?? 0), age: Number(r.rows[0]?.age ?? 0) };
}
