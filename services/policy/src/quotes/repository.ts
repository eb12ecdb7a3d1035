// Quotes (migrations/0005_quotes.sql): the rows, the API's quote record, and every write, each in
// the caller's transaction with the event that describes it (quote.created / quote.updated, data: the
// quote as GET /v1/quotes/{id} shows it). Every read is scoped to the owner (tenant, partner): another
// partner's quote is indistinguishable from a missing one.
import { prepared, type Pool, type PoolClient } from '@partner/shared/db/pg';
import { DomainError } from '@partner/shared/domain/errors';
import { iso, isUuid } from '@partner/shared/domain/ids';
import { bindingOf, type CursorCodec, type CursorPosition } from '@partner/shared/domain/list-cursor';
import { recordEvent, recordEvents, type EventToRecord, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import type { QuoteRecord, QuoteReason, QuoteStatusName } from '@partner/shared/domain/quotes';

export interface Owner {
  tenantId: string;
  partnerId: string;
}

type Db = Pool | PoolClient;
type Names = ReturnType<typeof natsNames>;

export interface QuoteRow {
  quote_id: string;
  tenant_id: string;
  partner_id: string;
  submission_id: string;
  product_id: string;
  job_id: string;
  option_index: number;
  option_limit: string;
  option_retention: string;
  status: QuoteStatusName;
  premium_amount: string | null;
  premium_currency: string | null;
  rating_version: string;
  valid_until: Date | null;
  referral_reasons: QuoteReason[] | null;
  referral_due_by: Date | null;
  decision_outcome: 'approved' | 'declined' | null;
  decision_note: string | null;
  decision_decided_at: Date | null;
  decision_decided_by: string | null;
  decision_job_id: string | null;
  decline_reasons: QuoteReason[] | null;
  offer: string | null;
  offer_sha256: string | null;
  test_clock_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const QUOTE_COLUMNS = `quote_id, tenant_id, partner_id, submission_id, product_id, job_id, option_index, option_limit,
  option_retention, status, premium_amount::text AS premium_amount, premium_currency, rating_version::text AS rating_version,
  valid_until, referral_reasons, referral_due_by, decision_outcome, decision_note, decision_decided_at, decision_decided_by,
  decision_job_id, decline_reasons, offer, offer_sha256, test_clock_id, created_at, updated_at`;

/** The quote as the API shows it (GET /v1/quotes/{id}, lists, job results, event data). */
export function quoteRecord(row: QuoteRow): QuoteRecord {
  return {
    quoteId: row.quote_id,
    submissionId: row.submission_id,
    productId: row.product_id,
    status: row.status,
    option: { limit: row.option_limit, retention: row.option_retention },
    premium: row.premium_amount !== null && row.premium_currency !== null ? { amount: row.premium_amount, currency: row.premium_currency } : null,
    ratingVersion: Number(row.rating_version),
    validUntil: row.valid_until ? iso(row.valid_until) : null,
    referral:
      row.referral_reasons && row.referral_due_by
        ? {
            reasons: row.referral_reasons,
            dueBy: iso(row.referral_due_by),
            ...(row.decision_outcome && row.decision_decided_at
              ? {
                  decision: {
                    outcome: row.decision_outcome,
                    ...(row.decision_note !== null ? { note: row.decision_note } : {}),
                    decidedAt: iso(row.decision_decided_at),
                  },
                }
              : {}),
          }
        : null,
    decline: row.decline_reasons ? { reasons: row.decline_reasons } : null,
    offer: row.offer,
    testClockId: row.test_clock_id,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** quote.created / quote.updated for a row, to record in the caller's transaction. */
const quoteEvent = (row: QuoteRow, type: 'quote.created' | 'quote.updated'): EventToRecord => ({
  owner: { tenantId: row.tenant_id, partnerId: row.partner_id },
  type,
  timestamp: iso(row.updated_at),
  data: quoteRecord(row),
});

/** Records quote.created / quote.updated for a row in the caller's transaction (publish it after the commit). */
export function recordQuoteEvent(c: PoolClient, names: Names, row: QuoteRow, type: 'quote.created' | 'quote.updated'): Promise<RecordedEvent> {
  const e = quoteEvent(row, type);
  return recordEvent(c, names, e.owner, e.type, e.timestamp, e.data);
}

export async function getQuote(db: Db, owner: Owner, quoteId: string): Promise<QuoteRow | undefined> {
  if (!isUuid(quoteId)) return undefined;
  const r = await db.query<QuoteRow>(
    prepared(`SELECT ${QUOTE_COLUMNS} FROM quotes WHERE quote_id = $1 AND tenant_id = $2 AND partner_id = $3`, [
      quoteId.toLowerCase(),
      owner.tenantId,
      owner.partnerId,
    ]),
  );
  return r.rows[0];
}

/** A quote by id alone, for operators (admin CLI). */
export async function getQuoteById(db: Db, quoteId: string): Promise<QuoteRow | undefined> {
  if (!isUuid(quoteId)) return undefined;
  return (await db.query<QuoteRow>(`SELECT ${QUOTE_COLUMNS} FROM quotes WHERE quote_id = $1`, [quoteId.toLowerCase()])).rows[0];
}

/** Locks a quote's row (FOR UPDATE) in the caller's transaction; owner-scoped unless owner is null (operators). */
export async function lockQuote(c: PoolClient, owner: Owner | null, quoteId: string): Promise<QuoteRow | undefined> {
  if (!isUuid(quoteId)) return undefined;
  const r = owner
    ? await c.query<QuoteRow>(`SELECT ${QUOTE_COLUMNS} FROM quotes WHERE quote_id = $1 AND tenant_id = $2 AND partner_id = $3 FOR UPDATE`, [
        quoteId.toLowerCase(),
        owner.tenantId,
        owner.partnerId,
      ])
    : await c.query<QuoteRow>(`SELECT ${QUOTE_COLUMNS} FROM quotes WHERE quote_id = $1 FOR UPDATE`, [quoteId.toLowerCase()]);
  return r.rows[0];
}

/** The quotes a quote.create job created, in option order (empty when it created none). */
export async function quotesOfJob(db: Db, jobId: string): Promise<QuoteRow[]> {
  const r = await db.query<QuoteRow>(prepared(`SELECT ${QUOTE_COLUMNS} FROM quotes WHERE job_id = $1 ORDER BY option_index`, [jobId]));
  return r.rows;
}

/** One quote a job creates, its terms already rated (and its offer signed when open). */
export interface NewQuote {
  quoteId: string;
  option: { limit: string; retention: string };
  status: 'open' | 'referred' | 'declined';
  premium: { amount: string; currency: string } | null;
  validUntil: Date | null;
  referral: { reasons: QuoteReason[]; dueBy: Date } | null;
  decline: { reasons: QuoteReason[] } | null;
  offer: { jws: string; sha256: string } | null;
}

export interface NewQuotes {
  owner: Owner;
  submissionId: string;
  productId: string;
  jobId: string;
  ratingVersion: number;
  testClockId: string | null;
  quotes: NewQuote[];
}

// The job's quotes if it made them already; else the submission's open and referred quotes superseded
// and the new ones inserted (from JSON, in option order). One statement: the three parts share its
// snapshot, taken after the caller's lock, so the UPDATE never sees the rows the INSERT adds.
const CREATE_QUOTES = `
  WITH existing AS (
    SELECT ${QUOTE_COLUMNS} FROM quotes WHERE job_id = $1
  ), writing AS (
    SELECT NOT EXISTS (SELECT 1 FROM existing)
       AND EXISTS (SELECT 1 FROM products WHERE product_id = $5 AND rating_version = $6) AS ok
  ), superseded AS (
    UPDATE quotes SET status = 'superseded', updated_at = date_trunc('milliseconds', now())
     WHERE tenant_id = $2 AND partner_id = $3 AND submission_id = $4 AND status IN ('open', 'referred')
       AND (SELECT ok FROM writing)
    RETURNING ${QUOTE_COLUMNS}
  ), created AS (
    INSERT INTO quotes (quote_id, tenant_id, partner_id, submission_id, product_id, job_id, option_index, option_limit,
           option_retention, status, premium_amount, premium_currency, rating_version, valid_until, referral_reasons,
           referral_due_by, decline_reasons, offer, offer_sha256, test_clock_id)
    SELECT q.quote_id, $2, $3, $4, $5, $1, q.option_index, q.option_limit, q.option_retention, q.status, q.premium_amount,
           q.premium_currency, $6, q.valid_until, q.referral_reasons, q.referral_due_by, q.decline_reasons, q.offer,
           q.offer_sha256, $7
      FROM jsonb_to_recordset($8::jsonb) AS q(quote_id uuid, option_index smallint, option_limit text, option_retention text,
           status text, premium_amount numeric, premium_currency text, valid_until timestamptz, referral_reasons jsonb,
           referral_due_by timestamptz, decline_reasons jsonb, offer text, offer_sha256 text)
     WHERE (SELECT ok FROM writing)
    RETURNING ${QUOTE_COLUMNS}
  )
  SELECT 'existing' AS part, * FROM existing
  UNION ALL SELECT 'superseded', * FROM superseded
  UNION ALL SELECT 'created', * FROM created`;

/**
 * The lock that serialises the quote jobs of a submission (transaction-scoped): a statement after it
 * sees what the one before committed. Without parameters, so the transaction takes it with its BEGIN
 * (withTx's `lead`); the submission id is a UUID, checked here before it is written into the text.
 */
export function quotesLockSql(submissionId: string): string {
  if (!isUuid(submissionId)) throw new Error(`not a UUID: ${submissionId}`);
  return `SELECT pg_advisory_xact_lock(hashtext('quotes:' || '${submissionId}'))`;
}

/**
 * The refusal of quotes rated with a plan replaced since (`product rating set`): the worker reads the
 * current plan and rates again. Not a contract code: a partner never sees it.
 */
export const ratingPlanChanged = (productId: string, ratingVersion: number): DomainError =>
  new DomainError('rating_plan_changed', `the options were rated with version ${ratingVersion} of product ${productId}'s rating plan, which is no longer its current one`);

/**
 * Inserts a job's quotes and supersedes the submission's earlier open and referred quotes, with
 * their events, in the caller's transaction, which holds quotesLockSql(submissionId): so two quote
 * requests of one submission leave exactly one set open. Idempotent by job id: when the job's quotes
 * exist already, they are returned and nothing is written. Then only quotes rated with the product's
 * current plan are written (the same statement checks its version), else rating_plan_changed. Three round trips after BEGIN and the lock
 * (one round trip): CREATE_QUOTES, the events (one statement), COMMIT (eight round trips before).
 */
export async function insertQuotes(
  c: PoolClient,
  names: Names,
  q: NewQuotes,
): Promise<{ quotes: QuoteRow[]; superseded: QuoteRow[]; events: RecordedEvent[]; replayed: boolean }> {
  const quotesJson = q.quotes.map((n, i) => ({
    quote_id: n.quoteId,
    option_index: i,
    option_limit: n.option.limit,
    option_retention: n.option.retention,
    status: n.status,
    premium_amount: n.premium?.amount ?? null,
    premium_currency: n.premium?.currency ?? null,
    valid_until: n.validUntil?.toISOString() ?? null,
    referral_reasons: n.referral?.reasons ?? null,
    referral_due_by: n.referral?.dueBy.toISOString() ?? null,
    decline_reasons: n.decline?.reasons ?? null,
    offer: n.offer?.jws ?? null,
    offer_sha256: n.offer?.sha256 ?? null,
  }));
  const r = await c.query<QuoteRow & { part: 'existing' | 'superseded' | 'created' }>(
    prepared(CREATE_QUOTES, [q.jobId, q.owner.tenantId, q.owner.partnerId, q.submissionId, q.productId, q.ratingVersion, q.testClockId, JSON.stringify(quotesJson)]),
  );
  // Each part's rows in option order.
  const part = (name: string): QuoteRow[] =>
    r.rows.filter((x) => x.part === name).map(({ part: _part, ...row }) => row as QuoteRow).sort((a, b) => a.option_index - b.option_index);
  const existing = part('existing');
  if (existing.length > 0) return { quotes: existing, superseded: [], events: [], replayed: true };
  const [superseded, quotes] = [part('superseded'), part('created')];
  // Nothing written: the options were rated with a plan that is no longer the product's current one.
  if (quotes.length === 0) throw ratingPlanChanged(q.productId, q.ratingVersion);
  const events = await recordEvents(c, names, [
    ...superseded.map((row) => quoteEvent(row, 'quote.updated')),
    ...quotes.map((row) => quoteEvent(row, 'quote.created')),
  ]);
  return { quotes, superseded, events, replayed: false };
}

/** An underwriter's decision on a referred quote (the caller has checked it is referred, under lock). */
export interface Decision {
  quoteId: string;
  outcome: 'approved' | 'declined';
  note: string | null;
  decidedAt: Date;
  decidedBy: string;
  /** The UAT decide job, when a job decided (null for an operator). */
  jobId: string | null;
  /** approved: the premium (the rated one or the underwriter's), its validUntil and new offer. */
  approved?: { premium: { amount: string; currency: string }; validUntil: Date; offer: { jws: string; sha256: string } };
  /** declined: the reason code. */
  declineCode?: string;
}

/** Records a decision and its quote.updated event in the caller's transaction. */
export async function recordDecision(c: PoolClient, names: Names, d: Decision): Promise<{ row: QuoteRow; event: RecordedEvent }> {
  const a = d.approved;
  const r = await c.query<QuoteRow>(
    `UPDATE quotes
        SET status = $2, decision_outcome = $3, decision_note = $4, decision_decided_at = $5, decision_decided_by = $6,
            decision_job_id = $7,
            premium_amount = CASE WHEN $3 = 'approved' THEN $8::numeric ELSE NULL END,
            premium_currency = CASE WHEN $3 = 'approved' THEN $9 ELSE NULL END,
            valid_until = $10, offer = $11, offer_sha256 = $12,
            decline_reasons = CASE WHEN $3 = 'declined' THEN jsonb_build_array(jsonb_build_object('code', $13::text, 'field', NULL)) ELSE NULL END,
            updated_at = date_trunc('milliseconds', now())
      WHERE quote_id = $1 AND status = 'referred'
      RETURNING ${QUOTE_COLUMNS}`,
    [
      d.quoteId,
      d.outcome === 'approved' ? 'open' : 'declined',
      d.outcome,
      d.note,
      d.decidedAt,
      d.decidedBy,
      d.jobId,
      a?.premium.amount ?? null,
      a?.premium.currency ?? null,
      a?.validUntil ?? null,
      a?.offer.jws ?? null,
      a?.offer.sha256 ?? null,
      d.declineCode ?? null,
    ],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`quote ${d.quoteId} is not referred`);
  return { row, event: await recordQuoteEvent(c, names, row, 'quote.updated') };
}

/** The quote a UAT decide job decided already (a redelivery), if any. */
export async function quoteDecidedByJob(db: Db, jobId: string): Promise<QuoteRow | undefined> {
  return (await db.query<QuoteRow>(`SELECT ${QUOTE_COLUMNS} FROM quotes WHERE decision_job_id = $1`, [jobId])).rows[0];
}

/**
 * Moves quotes to another status (expired, not_taken, bound, …) with a quote.updated event each, in
 * the caller's transaction; only rows currently in one of `from` change. Returns the changed rows.
 */
export async function setQuoteStatus(
  c: PoolClient,
  names: Names,
  quoteIds: string[],
  to: QuoteStatusName,
  from: QuoteStatusName[],
  opts: { eventOrder?: readonly string[] } = {},
): Promise<{ rows: QuoteRow[]; events: RecordedEvent[] }> {
  if (quoteIds.length === 0) return { rows: [], events: [] };
  const rows = (
    await c.query<QuoteRow>(
      `UPDATE quotes SET status = $2, updated_at = date_trunc('milliseconds', now())
        WHERE quote_id = ANY($1::uuid[]) AND status = ANY($3::text[])
        RETURNING ${QUOTE_COLUMNS}`,
      [quoteIds, to, from],
    )
  ).rows;
  // Events in the order the caller names (a test clock's advance: time order), else as updated.
  if (opts.eventOrder) {
    const place = new Map(opts.eventOrder.map((id, i) => [id, i]));
    rows.sort((a, b) => (place.get(a.quote_id) ?? 0) - (place.get(b.quote_id) ?? 0));
  }
  const events = await recordEvents(c, names, rows.map((row) => quoteEvent(row, 'quote.updated')));
  return { rows, events };
}

/**
 * A withdrawn submission's open and referred quotes become not_taken, with quote.updated each, in one
 * transaction (locked in id order, as every writer of quotes locks them).
 */
export async function releaseSubmissionQuotes(
  c: PoolClient,
  names: Names,
  owner: { tenantId: string; partnerId: string },
  submissionId: string,
): Promise<{ rows: QuoteRow[]; events: RecordedEvent[] }> {
  const ids = (
    await c.query<{ quote_id: string }>(
      `SELECT quote_id FROM quotes
        WHERE tenant_id = $1 AND partner_id = $2 AND submission_id = $3 AND status IN ('open', 'referred')
        ORDER BY quote_id FOR UPDATE`,
      [owner.tenantId, owner.partnerId, submissionId],
    )
  ).rows.map((r) => r.quote_id);
  return setQuoteStatus(c, names, ids, 'not_taken', ['open', 'referred']);
}

/** Referrals waiting on an underwriter (every tenant), oldest due first; `overdueAt`: only those due before it. */
export async function referralsWaiting(db: Db, opts: { overdueAt?: Date; limit?: number } = {}): Promise<QuoteRow[]> {
  const values: unknown[] = [];
  let where = `status = 'referred'`;
  if (opts.overdueAt) {
    values.push(opts.overdueAt);
    where += ` AND referral_due_by < $1`;
  }
  values.push(opts.limit ?? 10_000);
  const r = await db.query<QuoteRow>(`SELECT ${QUOTE_COLUMNS} FROM quotes WHERE ${where} ORDER BY referral_due_by, quote_id LIMIT $${values.length}`, values);
  return r.rows;
}

export interface ListQuotesArgs {
  submissionId: string;
  limit: number;
  status?: QuoteStatusName;
  after?: CursorPosition;
}

/** Filters as bound into a cursor: a cursor is valid only with the very filters it was issued for. */
export function quoteListFilters(a: Pick<ListQuotesArgs, 'submissionId' | 'status'>): (string | undefined)[] {
  return [a.submissionId, a.status];
}

/** A page of a submission's quotes, newest first (keyset on created_at, quote_id). */
export async function listQuotes(db: Db, owner: Owner, args: ListQuotesArgs, codec: CursorCodec): Promise<{ rows: QuoteRow[]; nextCursor: string }> {
  const values: unknown[] = [owner.tenantId, owner.partnerId, args.submissionId];
  const where = ['tenant_id = $1', 'partner_id = $2', 'submission_id = $3::uuid'];
  if (args.status) {
    values.push(args.status);
    where.push(`status = $${values.length}`);
  }
  if (args.after) {
    values.push(new Date(args.after.createdAtMs).toISOString(), args.after.id);
    where.push(`(created_at, quote_id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
  }
  values.push(args.limit + 1);
  const { rows } = await db.query<QuoteRow>(
    prepared(`SELECT ${QUOTE_COLUMNS} FROM quotes WHERE ${where.join(' AND ')} ORDER BY created_at DESC, quote_id DESC LIMIT $${values.length}`, values),
  );
  if (rows.length <= args.limit) return { rows, nextCursor: '' };
  const page = rows.slice(0, args.limit);
  const last = page[page.length - 1]!;
  return { rows: page, nextCursor: codec.encode({ createdAtMs: last.created_at.getTime(), id: last.quote_id }, bindingOf(owner, quoteListFilters(args))) };
}
