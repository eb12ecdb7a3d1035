// Data access for the job schema: submitting (with idempotency and outbox, one transaction),
// reading, starting and settling jobs, and the sweeps.
import { DomainError } from '@partner/shared/domain/errors';
import { ASYNC_COMMIT, withTx, dbError, prepared, sqlIso, type Pool } from '@partner/shared/db/pg';
import { newEventId } from '@partner/shared/domain/events';
import { outboxInsertSql, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import type { Job, JobError } from '@partner/shared/grpc/proto-types';
import { JOB_KINDS, JOB_STATUS, jobMessageJson, type JobCaller, type JobStatusName } from '@partner/shared/domain/jobs';

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
  error: { code: string; message: string; retryable: boolean; details?: unknown[] } | null;
  deliveries: number;
  created_at: Date;
  updated_at: Date;
}

/** A job as replies and events show it: everything but the payload, which only StartJob returns. */
const COLUMNS = `job_id, kind, tenant_id, partner_id, client_id, principal_id, status, result, error,
                 deliveries, created_at, updated_at`;
const COLUMNS_WITH_PAYLOAD = `${COLUMNS}, payload`;
export const LIST_COLUMNS = COLUMNS;
/** COLUMNS qualified by a table or CTE name. */
const prefixed = (table: string) => COLUMNS.split(',').map((c) => `${table}.${c.trim()}`).join(', ');

export function toProto(row: JobRow, withPayload = false): Job {
  return {
    id: row.job_id,
    kind: row.kind,
    status: JOB_STATUS.toProto(row.status),
    resultJson: row.result === null || row.result === undefined ? '' : JSON.stringify(row.result),
    error: row.error ? { code: row.error.code, message: row.error.message, retryable: row.error.retryable, detailsJson: row.error.details ? JSON.stringify(row.error.details) : '' } : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    payloadJson: withPayload ? JSON.stringify(row.payload) : '',
    caller: callerOf(row),
  };
}

/** Who a job acts for, from its row (no principal: ''). */
function callerOf(row: Pick<JobRow, 'tenant_id' | 'partner_id' | 'client_id' | 'principal_id'>): JobCaller {
  return { tenantId: row.tenant_id, partnerId: row.partner_id, clientId: row.client_id, principalId: row.principal_id ?? '' };
}

// The end of both statements' key claim: a key already held is taken over only once it has expired
// (a live key updates nothing, so its row claims no job).
const RECLAIM_EXPIRED_KEY = `ON CONFLICT (tenant_id, partner_id, client_id, scope, key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, job_id = EXCLUDED.job_id,
            created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE idempotency_keys.expires_at <= now()
     RETURNING job_id`;

// One statement, so one round trip and one commit: claim the key (or reclaim an expired one), insert
// the job and its outbox row. A live key claims nothing, so nothing is inserted and the statement
// returns no row. Concurrent requests with one key serialize on the key's primary key: the loser's
// INSERT waits for the winner's commit, then finds the key taken.
const SUBMIT_WITH_KEY = `WITH claimed AS (
     INSERT INTO idempotency_keys (tenant_id, partner_id, client_id, scope, key, fingerprint, job_id, expires_at)
     VALUES ($1, $2, $3, $10, $11, $12, $4, now() + make_interval(hours => $13))
     ${RECLAIM_EXPIRED_KEY}
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
const REPLAY = `SELECT k.fingerprint, ${prefixed('j')}
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

// Several SubmitJobs as one statement (shared/db/batcher.ts): the same three inserts over the rows of
// the arrays. Keys are claimed in key order, so two batches in flight lock shared keys in one order
// (no deadlock between them); a batch never holds one key twice (the batcher keeps such calls apart).
// A row whose key is live claims nothing and gets no job: the caller then replays or refuses it.
const SUBMIT_BATCH = `WITH input AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                          $9::text[], $10::text[], $11::text[], $12::text[])
       AS t(job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, subject, trace, scope, key, fingerprint)
   ), claimed AS (
     INSERT INTO idempotency_keys (tenant_id, partner_id, client_id, scope, key, fingerprint, job_id, expires_at)
     SELECT tenant_id, partner_id, client_id, scope, key, fingerprint, job_id, now() + make_interval(hours => $13)
       FROM input WHERE key IS NOT NULL
      ORDER BY tenant_id, partner_id, client_id, scope, key
     ${RECLAIM_EXPIRED_KEY}
   ), job AS (
     INSERT INTO jobs (job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, status)
     SELECT job_id, kind, tenant_id, partner_id, client_id, principal_id, payload::jsonb, 'accepted'
       FROM input WHERE key IS NULL OR job_id IN (SELECT job_id FROM claimed)
     RETURNING ${COLUMNS}
   ), queued AS (
     INSERT INTO outbox (job_id, subject, trace_context)
     SELECT job.job_id, input.subject, input.trace::jsonb FROM job JOIN input USING (job_id)
     RETURNING id, job_id
   )
   SELECT job.*, queued.id AS outbox_id FROM job JOIN queued USING (job_id)`;

const traceJson = (input: SubmitInput) =>
  input.traceContext && Object.keys(input.traceContext).length > 0 ? JSON.stringify(input.traceContext) : null;

/** A job recorded by insertJobs, or undefined where the request's idempotency key was live. */
export type Inserted = { row: JobRow; outboxId: string } | undefined;

/**
 * Records jobs with their idempotency keys and outbox rows, all in one statement (one commit). One
 * input runs the single-row statement, as SubmitJob always did; several run SUBMIT_BATCH. All must
 * share retentionHours. Answers per input, in order.
 */
export async function insertJobs(pool: Pool, inputs: SubmitInput[]): Promise<Inserted[]> {
  if (inputs.length === 1) {
    const input = inputs[0]!;
    const common = [input.tenantId, input.partnerId, input.clientId, input.jobId, input.kind, input.principalId, input.payloadJson, input.subject, traceJson(input)];
    const r = await pool.query<JobRow & { outbox_id: string }>(
      input.idempotency
        ? prepared(SUBMIT_WITH_KEY, [...common, input.idempotency.scope, input.idempotency.key, input.idempotency.fingerprint, input.retentionHours])
        : prepared(SUBMIT_WITHOUT_KEY, common),
    );
    return [split(r.rows[0])];
  }
  const column = (f: (i: SubmitInput) => string | null) => inputs.map(f);
  const r = await pool.query<JobRow & { outbox_id: string }>(
    prepared(SUBMIT_BATCH, [
      column((i) => i.jobId),
      column((i) => i.kind),
      column((i) => i.tenantId),
      column((i) => i.partnerId),
      column((i) => i.clientId),
      column((i) => i.principalId),
      column((i) => i.payloadJson),
      column((i) => i.subject),
      column(traceJson),
      column((i) => i.idempotency?.scope ?? null),
      column((i) => i.idempotency?.key ?? null),
      column((i) => i.idempotency?.fingerprint ?? null),
      inputs[0]!.retentionHours,
    ]),
  );
  const byId = new Map(r.rows.map((row) => [row.job_id, row]));
  return inputs.map((i) => split(byId.get(i.jobId)));
}

function split(created: (JobRow & { outbox_id: string }) | undefined): Inserted {
  if (!created) return undefined;
  const { outbox_id: outboxId, ...row } = created;
  return { row, outboxId };
}

/** Calls with one idempotency key never share a batch (one statement may not claim a key twice). */
export const submitBatchKey = (i: SubmitInput): string | undefined =>
  i.idempotency && [i.tenantId, i.partnerId, i.clientId, i.idempotency.scope, i.idempotency.key].join('\u0000');

/**
 * Records the job, its idempotency key and its outbox row in one transaction. With a live key
 * already taken, returns the job it points to (replayed) or refuses a different request under it.
 * Concurrent requests with one key serialize on the key's primary key: exactly one job results.
 * `insert` records it (alone by default; the job service passes its batcher).
 */
export async function submitJob(
  pool: Pool,
  input: SubmitInput,
  insert: (input: SubmitInput) => Promise<Inserted> = async (i) => (await insertJobs(pool, [i]))[0],
): Promise<{ row: JobRow; replayed: boolean; outboxId?: string }> {
  const created = await insert(input).catch(dbError);
  if (created) return { row: created.row, replayed: false, outboxId: created.outboxId };

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

/** A job, of the owner when scoped; `forShare` (scoped reads) reads it under a row lock: see cancelJob. */
export async function getJob(
  pool: Pool,
  jobId: string,
  scope?: { tenantId: string; partnerId: string },
  columns = COLUMNS,
  opts: { forShare?: boolean } = {},
): Promise<JobRow | undefined> {
  const r = scope
    ? await pool.query<JobRow>(
        prepared(`SELECT ${columns} FROM jobs WHERE job_id = $1 AND tenant_id = $2 AND partner_id = $3${opts.forShare ? ' FOR SHARE' : ''}`, [jobId, scope.tenantId, scope.partnerId]),
      )
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

/**
 * Claims jobs for the deliveries that run them, before any effect, in one statement: an accepted
 * job becomes running; a running one stays running (a redelivery of a job claimed earlier, by this
 * worker or by one that died: JetStream redelivers only after the holder naked it or its ack wait —
 * the claim's lease, kept alive by working() — ran out, and the effects are idempotent by job id).
 * A settled or cancelled job matches nothing: it is not claimed and must not run. The rows are
 * locked in job-id order first, so two overlapping claim batches (redeliveries) wait for each other
 * instead of deadlocking: each through its key, in a LATERAL subquery that locks (PostgreSQL does not
 * flatten it, so the plan has no other shape). Written as a join, the lock step was planned on the
 * estimates of a table grown since its last ANALYZE: a hash join over a bitmap scan of every
 * unsettled job (14,000 index entries read to lock 2; docs/performance.md). Answers the ids claimed.
 *
 * The claim commits without waiting for its WAL flush (ASYNC_COMMIT) unless opts.asyncCommit is false
 * (JOB_CLAIM_ASYNC_COMMIT=false). Safe because nothing outside PostgreSQL acts on a claim before a
 * synchronous commit has flushed it: the claim only tells the worker to start, and every effect a job
 * has is a synchronous commit in the same database (each service has a schema of it), whose flush
 * writes all WAL before it, the claim's included. A crash that loses the claim therefore lost every
 * effect of that delivery too: the job is `accepted` again, as if never claimed, and its message (not
 * acked) is delivered again. The one answer drawn from a claim alone, a cancel refused because the
 * job has started, flushes first (cancelJob). docs/performance.md, "Issue 47, eighth session", and
 * test/claim-crash.test.ts.
 */
export async function claimJobs(
  pool: Pool,
  items: { jobId: string; delivery: number }[],
  opts: { asyncCommit: boolean } = { asyncCommit: true },
): Promise<Set<string>> {
  const r = await pool.query<{ job_id: string }>(
    prepared(
      `WITH locked AS (
         SELECT l.job_id, i.delivery
           FROM (SELECT * FROM unnest($1::text[], $2::int[]) AS i(job_id, delivery) ORDER BY job_id) i
           CROSS JOIN LATERAL (
             SELECT j.job_id FROM jobs j WHERE j.job_id = i.job_id AND j.status IN ('accepted', 'running') FOR UPDATE) l)
       UPDATE jobs j SET status = 'running', deliveries = GREATEST(j.deliveries, locked.delivery),
              updated_at = date_trunc('milliseconds', clock_timestamp())
         FROM locked
        WHERE locked.job_id = j.job_id AND j.status IN ('accepted', 'running')${opts.asyncCommit ? ` AND ${ASYNC_COMMIT}` : ''}
        RETURNING j.job_id`,
      [items.map((i) => i.jobId), items.map((i) => i.delivery)],
    ),
  );
  return new Set(r.rows.map((row) => row.job_id));
}

// What a job's payload keeps once it settles (or is cancelled): all of it, but the webhook signing
// secret a partner brings to POST /v1/webhook-endpoints, which the events service keeps sealed
// (docs/webhooks-design.md "Signing secrets at rest"); no settled job runs again, so nothing needs it.
const PAYLOAD_KEPT = `payload = CASE WHEN kind = '${JOB_KINDS.webhookEndpointCreate}' THEN payload - 'secret' ELSE payload END`;

// One statement, so one round trip and one commit: cancel the job if no worker has claimed it, and
// record job.canceled (data: the job) in event_outbox. A claimed or settled job matches nothing.
const CANCEL = `WITH canceled AS (
     UPDATE jobs SET status = 'canceled', error = $4::jsonb, settled_at = now(), ${PAYLOAD_KEPT},
            updated_at = date_trunc('milliseconds', clock_timestamp())
      WHERE job_id = $1 AND tenant_id = $2 AND partner_id = $3 AND status = 'accepted'
      RETURNING ${COLUMNS}
   ), event AS (
     ${outboxInsertSql({
       source: 'canceled',
       eventId: '$5',
       subject: '$6',
       type: "'job.canceled'",
       timestampSql: sqlIso('s.updated_at'),
       dataSql: `jsonb_build_object('id', s.job_id, 'kind', s.kind, 'status', s.status, 'error', s.error,
                                    'createdAt', ${sqlIso('s.created_at')}, 'updatedAt', ${sqlIso('s.updated_at')})`,
     })}
   )
   SELECT canceled.*, event.id AS outbox_id, event.body AS event_body FROM canceled, event`;

/**
 * Cancels a job of the owner that no worker has claimed (one statement; exactly one of a cancel and
 * a claim wins, as both update the row only from `accepted`). Answers the job and its event when
 * cancelled now; the job as it is otherwise (cancelled before, claimed or settled); undefined when
 * the owner has no such job.
 */
export async function cancelJob(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  jobId: string,
  owner: { tenantId: string; partnerId: string },
  error: JobError,
): Promise<{ row: JobRow; canceledNow: boolean; event?: RecordedEvent } | undefined> {
  const eventId = newEventId();
  const subject = names.eventSubject('job.canceled');
  type Out = JobRow & { outbox_id: string; event_body: string };
  const r = await pool.query<Out>(
    prepared(CANCEL, [jobId, owner.tenantId, owner.partnerId, JSON.stringify({ code: error.code, message: error.message, retryable: !!error.retryable }), eventId, subject]),
  );
  const done = r.rows[0];
  if (done) {
    const { outbox_id: outboxId, event_body: body, ...row } = done;
    return { row, canceledNow: true, event: { outboxId, msgId: eventId, subject, body } };
  }
  // Refused: read under a row lock, whose WAL record makes this commit synchronous, so a claim
  // committed asynchronously (ASYNC_COMMIT) is on disk before "the job has started" is answered; a
  // crash can then no longer undo the claim behind that answer.
  const existing = await getJob(pool, jobId, owner, COLUMNS, { forShare: true });
  return existing ? { row: existing, canceledNow: false } : undefined;
}

// One statement, so one round trip and one commit: settle the job if it is unsettled, and record its
// event (job.succeeded / job.failed) in event_outbox. The event's data is the job as GET /v1/jobs/{id}
// shows it, with its kind (timestamps as the API prints them; both columns are whole milliseconds).
const SETTLED_EVENT_DATA = `jsonb_build_object('id', s.job_id, 'kind', s.kind, 'status', s.status,
                                    'createdAt', ${sqlIso('s.created_at')}, 'updatedAt', ${sqlIso('s.updated_at')})
                 || CASE WHEN s.status = 'succeeded' THEN jsonb_build_object('result', s.result)
                         ELSE jsonb_build_object('error', s.error) END`;

const SETTLE = `WITH settled AS (
     UPDATE jobs SET status = $2, result = $3, error = $4, settled_at = now(), deliveries = GREATEST(deliveries, $5), ${PAYLOAD_KEPT},
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
       dataSql: SETTLED_EVENT_DATA,
     })}
   )
   SELECT settled.*, event.id AS outbox_id, event.body AS event_body FROM settled, event`;

// Several SettleJobs as one statement (shared/db/batcher.ts): the same UPDATE and event insert over the
// rows of the arrays, each event joined back to its job by its event id. A batch never holds one job
// twice (the batcher keeps such calls apart).
const SETTLE_BATCH = `WITH input AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[])
       AS t(job_id, status, result, error, delivery, event_id, event_subject, event_type)
   ), settled AS (
     UPDATE jobs j SET status = i.status, result = i.result::jsonb, error = i.error::jsonb, settled_at = now(),
            deliveries = GREATEST(j.deliveries, i.delivery), ${PAYLOAD_KEPT}, updated_at = date_trunc('milliseconds', clock_timestamp())
       FROM input i
      WHERE j.job_id = i.job_id AND j.status IN ('accepted', 'running')
      RETURNING ${prefixed('j')}, i.event_id, i.event_subject, i.event_type
   ), event AS (
     ${outboxInsertSql({
       source: 'settled',
       eventId: 's.event_id',
       subject: 's.event_subject',
       type: 's.event_type',
       timestampSql: sqlIso('s.updated_at'),
       dataSql: SETTLED_EVENT_DATA,
     })}
   )
   SELECT ${prefixed('settled')}, event.id AS outbox_id, event.body AS event_body
     FROM settled JOIN event USING (event_id)`;

/** A job error's field details as stored (and shown in job.failed): only when it has some. */
function detailsOf(error: JobError): { details?: unknown[] } {
  if (!error.detailsJson) return {};
  const details = JSON.parse(error.detailsJson) as unknown;
  return Array.isArray(details) && details.length > 0 ? { details } : {};
}

export interface SettleInput {
  jobId: string;
  outcome: { resultJson: string } | { error: JobError };
  delivery: number;
}

/** A job settled by settleJobs with its event, or undefined where the job was not unsettled. */
export type Settled = { row: JobRow; event: RecordedEvent } | undefined;

/**
 * Settles unsettled jobs and records their events (job.succeeded / job.failed), all in one
 * statement (one commit). One input runs the single-row statement; several run SETTLE_BATCH.
 * Answers per input, in order: undefined for a job that was already settled or does not exist.
 */
export async function settleJobs(pool: Pool, names: ReturnType<typeof natsNames>, inputs: SettleInput[]): Promise<Settled[]> {
  const rows = inputs.map((i) => {
    const isResult = 'resultJson' in i.outcome;
    const type = isResult ? 'job.succeeded' : 'job.failed';
    const error = 'error' in i.outcome ? i.outcome.error : undefined;
    return {
      jobId: i.jobId,
      status: isResult ? 'succeeded' : 'failed',
      result: 'resultJson' in i.outcome ? i.outcome.resultJson : null,
      error: error ? JSON.stringify({ code: error.code, message: error.message, retryable: !!error.retryable, ...detailsOf(error) }) : null,
      delivery: i.delivery,
      eventId: newEventId(),
      subject: names.eventSubject(type),
      type,
    };
  });
  type Out = JobRow & { outbox_id: string; event_body: string };
  let found: Out[];
  if (rows.length === 1) {
    const x = rows[0]!;
    found = (await pool.query<Out>(prepared(SETTLE, [x.jobId, x.status, x.result, x.error, x.delivery, x.eventId, x.subject, x.type]))).rows;
  } else {
    const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((x) => x[k]);
    found = (
      await pool.query<Out>(
        prepared(SETTLE_BATCH, [col('jobId'), col('status'), col('result'), col('error'), col('delivery'), col('eventId'), col('subject'), col('type')]),
      )
    ).rows;
  }
  const byId = new Map(found.map((r) => [r.job_id, r]));
  return rows.map((x) => {
    const settled = byId.get(x.jobId);
    if (!settled) return undefined;
    const { outbox_id: outboxId, event_body: body, ...row } = settled;
    return { row, event: { outboxId, msgId: x.eventId, subject: x.subject, body } };
  });
}

/**
 * Settles an unsettled job, and records its event (job.succeeded / job.failed) in the same
 * statement. Exactly once: the UPDATE only matches an unsettled row, so of two concurrent
 * settlements one wins and the other gets the settled job back with settledNow=false (and no event).
 * `settle` records it (alone by default; the job service passes its batcher).
 */
export async function settleJob(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  jobId: string,
  outcome: { resultJson: string } | { error: JobError },
  delivery = 0,
  settle: (input: SettleInput) => Promise<Settled> = async (i) => (await settleJobs(pool, names, [i]))[0],
): Promise<{ row: JobRow; settledNow: boolean; event?: RecordedEvent } | undefined> {
  const settled = await settle({ jobId, outcome, delivery });
  if (settled) return { row: settled.row, settledNow: true, event: settled.event };
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
 * What the outbox relay reads of a job's outbox row: the job id as the message id and, as `job`, the
 * job's row (null once the job is gone), which relayBody makes the message of.
 */
export const OUTBOX_RELAY_COLUMNS = `id, job_id AS msg_id, subject, NULL::text AS body, trace_context,
  (SELECT row_to_json(j) FROM (
     SELECT kind, tenant_id, partner_id, client_id, principal_id, created_at, payload::text AS payload_json
       FROM jobs WHERE jobs.job_id = outbox.job_id) j) AS job`;

/**
 * The message of a job the relay's loop publishes: the job's whole message, as the fast path sends it
 * (jobMessageJson). So a job the loop publishes (one the fast path missed, or the sweep queued again)
 * runs as any other: claimed with the claims of every first delivery, its sandbox hold kept (the
 * worker reads the hold from the message; with the id alone it could only claim the job through
 * StartJob, hold or not). A row whose job is gone yields the id alone, which the worker drops
 * (StartJob finds no job).
 */
export function relayBody(row: { msg_id: string; job?: unknown }): string {
  const job = row.job as (Pick<JobRow, 'kind' | 'tenant_id' | 'partner_id' | 'client_id' | 'principal_id'> & { created_at: string; payload_json: string }) | null | undefined;
  if (!job) return JSON.stringify({ jobId: row.msg_id });
  return jobMessageJson(row.msg_id, job.kind, callerOf(job), job.payload_json, new Date(job.created_at));
}

/** Rows waiting in the outbox, and the age in seconds of the oldest (0 when empty). */
export async function outboxBacklog(pool: Pool): Promise<{ n: number; age: number }> {
  const r = await pool.query<{ n: string; age: string | null }>('SELECT count(*) AS n, extract(epoch FROM now() - min(created_at)) AS age FROM outbox');
  return { n: Number(r.rows[0]?.n ?? 0), age: Number(r.rows[0]?.age ?? 0) };
}
