// Data access for the job schema: submitting (with idempotency and outbox, one transaction),
// reading, starting and settling jobs, and the sweeps.
import { DomainError } from '@partner/shared/errors';
import { withTx, dbError, type Pool } from '@partner/shared/pg';
import type { Job, JobError } from '@partner/shared/proto-types';

export interface JobRow {
  job_id: string;
  kind: string;
  tenant_id: string;
  partner_id: string;
  client_id: string;
  principal_id: string | null;
  payload: unknown;
  status: 'accepted' | 'running' | 'succeeded' | 'failed';
  result: unknown;
  error: { code: string; message: string; retryable: boolean } | null;
  deliveries: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, status, result, error,
                 deliveries, created_at, updated_at`;

const PROTO_STATUS = {
  accepted: 'JOB_STATUS_ACCEPTED',
  running: 'JOB_STATUS_RUNNING',
  succeeded: 'JOB_STATUS_SUCCEEDED',
  failed: 'JOB_STATUS_FAILED',
} as const;

export function toProto(row: JobRow, withPayload = false): Job {
  return {
    id: row.job_id,
    kind: row.kind,
    status: PROTO_STATUS[row.status],
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

export interface SubmitInput {
  jobId: string;
  kind: string;
  subject: string;
  tenantId: string;
  partnerId: string;
  clientId: string;
  principalId: string | null;
  payload: unknown;
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
  return withTx(pool, async (c) => {
    if (input.idempotency) {
      const { key, scope, fingerprint } = input.idempotency;
      const claimed = await c.query<{ job_id: string }>(
        `INSERT INTO idempotency_keys (tenant_id, partner_id, client_id, scope, key, fingerprint, job_id, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(hours => $8))
         ON CONFLICT (tenant_id, partner_id, client_id, scope, key) DO UPDATE
            SET fingerprint = EXCLUDED.fingerprint, job_id = EXCLUDED.job_id,
                created_at = now(), expires_at = EXCLUDED.expires_at
          WHERE idempotency_keys.expires_at <= now()
         RETURNING job_id`,
        [input.tenantId, input.partnerId, input.clientId, scope, key, fingerprint, input.jobId, input.retentionHours],
      );
      if (claimed.rowCount === 0) {
        const existing = await c.query<{ fingerprint: string; job_id: string }>(
          `SELECT fingerprint, job_id FROM idempotency_keys
            WHERE tenant_id = $1 AND partner_id = $2 AND client_id = $3 AND scope = $4 AND key = $5`,
          [input.tenantId, input.partnerId, input.clientId, scope, key],
        );
        const hit = existing.rows[0];
        if (!hit) throw new DomainError('unavailable', 'idempotency key changed concurrently; retry', { retryable: true });
        if (hit.fingerprint !== fingerprint) {
          throw new DomainError(
            'idempotency_key_reused',
            'this Idempotency-Key was already used with a different request; use a new key for a new request',
          );
        }
        const job = await c.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE job_id = $1`, [hit.job_id]);
        if (!job.rows[0]) throw new DomainError('internal', 'idempotency key points to a missing job');
        return { row: job.rows[0], replayed: true };
      }
    }
    const inserted = await c.query<JobRow>(
      `INSERT INTO jobs (job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'accepted')
       RETURNING ${COLUMNS}`,
      [input.jobId, input.kind, input.tenantId, input.partnerId, input.clientId, input.principalId, JSON.stringify(input.payload)],
    );
    const outbox = await c.query<{ id: string }>('INSERT INTO outbox (job_id, subject, trace_context) VALUES ($1, $2, $3) RETURNING id', [
      input.jobId,
      input.subject,
      input.traceContext && Object.keys(input.traceContext).length > 0 ? JSON.stringify(input.traceContext) : null,
    ]);
    return { row: inserted.rows[0]!, replayed: false, outboxId: outbox.rows[0]!.id };
  });
}

export async function getJob(pool: Pool, jobId: string, scope?: { tenantId: string; partnerId: string }): Promise<JobRow | undefined> {
  const r = scope
    ? await pool.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE job_id = $1 AND tenant_id = $2 AND partner_id = $3`, [
        jobId,
        scope.tenantId,
        scope.partnerId,
      ])
    : await pool.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE job_id = $1`, [jobId]);
  return r.rows[0];
}

/** Marks an unsettled job running (counting the delivery); returns the job as it then is. */
export async function startJob(pool: Pool, jobId: string, delivery: number): Promise<JobRow | undefined> {
  const r = await pool.query<JobRow>(
    `UPDATE jobs SET status = 'running', deliveries = GREATEST(deliveries, $2),
            updated_at = date_trunc('milliseconds', clock_timestamp())
      WHERE job_id = $1 AND status IN ('accepted', 'running')
      RETURNING ${COLUMNS}`,
    [jobId, delivery],
  );
  return r.rows[0] ?? (await getJob(pool, jobId));
}

/**
 * Settles an unsettled job. Exactly once: the UPDATE only matches an unsettled row, so of two
 * concurrent settlements one wins and the other gets the settled job back with settledNow=false.
 */
export async function settleJob(
  pool: Pool,
  jobId: string,
  outcome: { result: unknown } | { error: JobError },
): Promise<{ row: JobRow; settledNow: boolean } | undefined> {
  const isResult = 'result' in outcome;
  const r = await pool.query<JobRow>(
    `UPDATE jobs SET status = $2, result = $3, error = $4, settled_at = now(),
            updated_at = date_trunc('milliseconds', clock_timestamp())
      WHERE job_id = $1 AND status IN ('accepted', 'running')
      RETURNING ${COLUMNS}`,
    [
      jobId,
      isResult ? 'succeeded' : 'failed',
      isResult ? JSON.stringify(outcome.result) : null,
      isResult ? null : JSON.stringify({ code: outcome.error.code, message: outcome.error.message, retryable: !!outcome.error.retryable }),
    ],
  );
  if (r.rows[0]) return { row: r.rows[0], settledNow: true };
  const existing = await getJob(pool, jobId);
  return existing ? { row: existing, settledNow: false } : undefined;
}

export interface OutboxRow {
  id: string;
  job_id: string;
  subject: string;
  trace_context: Record<string, string> | null;
}

export async function deleteOutbox(pool: Pool, ids: string[]): Promise<void> {
  if (ids.length) await pool.query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [ids]);
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
