// The policy side of a bind (job quote.bind; API.md "Quotes…", bind): the quote's checks in the
// contract's order (CheckBind) and the core of the bind in one transaction (BindQuote): the quote
// `bound`, its siblings `not_taken`, the policy and its declarations PDF issued, with quote.updated
// and policy.issued. Both are keyed by the job id: a redelivered or retried job finds the policy it
// issued and issues nothing twice (policies_bind_job_key), and the partial unique index on the
// submission (policies_issued_submission_key) keeps a submission to one bind-issued policy whatever
// races the submission service's reservation lets through.
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { iso, isUuid } from '@partner/shared/domain/ids';
import { prepared, withTx, type Pool, type PoolClient } from '@partner/shared/db/pg';
import type { Clock } from '@partner/shared/domain/clock';
import { recordEvent, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import { randomUUID } from 'node:crypto';
import { lockQuote, setQuoteStatus, type QuoteRow } from '../quotes/repository.js';
import { COLUMNS, type Owner, type PolicyRow } from '../policies.js';
import { renderDeclarations } from './declarations.js';
import { quoteLapsed, statusAtIssue } from './transitions.js';
import { holdClockOfQuote } from '../clocks/test-clocks.js';
import { DOCUMENT_COLUMNS, policyRecord, type DocumentRow } from './documents.js';

type Names = ReturnType<typeof natsNames>;
const OFFER_SHA256 = /^[0-9a-f]{64}$/;

export const quoteNotOpen = (status: string): DomainError =>
  new DomainError('quote_not_open', `the quote is ${status}, not open`, { details: [{ field: 'status', issue: status }] });
export const offerChanged = (): DomainError =>
  new DomainError('offer_changed', 'offerSha256 is not the SHA-256 of the quote\'s current offer; read the quote again', {
    details: [{ field: 'offerSha256', issue: 'is not the hash of the quote\'s current offer' }],
  });

export interface Issued {
  policy: PolicyRow;
  documents: DocumentRow[];
}

async function issuedByJob(db: Pool | PoolClient, jobId: string): Promise<Issued | undefined> {
  const p = (await db.query<PolicyRow>(prepared(`SELECT ${COLUMNS} FROM policies WHERE bind_job_id = $1`, [jobId]))).rows[0];
  if (!p) return undefined;
  const docs = (await db.query<DocumentRow>(prepared(`SELECT ${DOCUMENT_COLUMNS} FROM policy_documents WHERE policy_id = $1 ORDER BY created_at, document_id`, [p.policy_id]))).rows;
  return { policy: p, documents: docs };
}

/**
 * The checks of a bind, in the contract's order, against the quote as it stands: `quote_not_open`
 * (an open quote past validUntil is recorded `expired` first, with quote.updated), `offer_changed`.
 * Returns the events to publish and the error to fail with, if any.
 */
async function check(tx: PoolClient, names: Names, q: QuoteRow, offerSha256: string, now: Date): Promise<{ error?: DomainError; events: RecordedEvent[] }> {
  if (q.status === 'open' && quoteLapsed(now, { quoteId: q.quote_id, status: q.status, validUntil: q.valid_until })) {
    const { events } = await setQuoteStatus(tx, names, [q.quote_id], 'expired', ['open']);
    return { error: quoteNotOpen('expired'), events };
  }
  if (q.status !== 'open') return { error: quoteNotOpen(q.status), events: [] };
  if (q.offer_sha256 !== offerSha256) return { error: offerChanged(), events: [] };
  return { events: [] };
}

export interface BindArgs {
  owner: Owner;
  jobId: string;
  quoteId: string;
  offerSha256: string;
}

function validate(a: BindArgs): void {
  if (!a.jobId) throw new DomainError('validation_error', 'job_id is required');
  if (!OFFER_SHA256.test(a.offerSha256)) {
    throw new DomainError('validation_error', 'offerSha256 must be 64 lowercase hex digits', { details: [{ field: 'offerSha256', issue: 'must be 64 lowercase hex digits' }] });
  }
  if (!isUuid(a.quoteId)) throw notFound('quote');
}

/** Step 1: this job's policy if it issued one; else the quote's checks (the submission id to reserve next). */
export async function checkBind(
  pool: Pool,
  names: Names,
  clock: (q: QuoteRow) => Clock,
  a: BindArgs,
): Promise<{ issued?: Issued; submissionId: string; events: RecordedEvent[] }> {
  validate(a);
  const issued = await issuedByJob(pool, a.jobId);
  if (issued) return { issued, submissionId: issued.policy.submission_id!, events: [] };
  const out = await withTx(pool, async (tx) => {
    const q = await lockQuote(tx, a.owner, a.quoteId);
    if (!q) throw notFound('quote');
    // Read again under the quote's lock: a concurrent delivery of this very job may have bound it
    // while this one waited (JetStream redelivers a job whose ack is late).
    const mine = await issuedByJob(tx, a.jobId);
    if (mine) return { issued: mine, submissionId: q.submission_id, events: [] };
    const r = await check(tx, names, q, a.offerSha256, clock(q).now());
    return { ...r, submissionId: q.submission_id };
  });
  if ('error' in out && out.error) throw Object.assign(out.error, { events: out.events });
  return out;
}

/** Attached to a failure that recorded events (an expiry) the caller must still publish. */
export const eventsOf = (err: unknown): RecordedEvent[] => ((err as { events?: RecordedEvent[] }).events ?? []);

/**
 * Step 3: the bind's core in one transaction. Fails like checkBind (the quote may have lapsed or
 * been bound by a racing job since), or quote_not_open `not_taken` when a policy of the submission
 * exists already (the unique index answered).
 */
export async function bindQuote(
  pool: Pool,
  names: Names,
  clock: (q: QuoteRow) => Clock,
  a: BindArgs & { insuredLegalName: string; effectiveDate: string },
): Promise<Issued & { events: RecordedEvent[] }> {
  validate(a);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(a.effectiveDate) || !a.insuredLegalName) throw new DomainError('validation_error', 'insured_legal_name and effective_date are required');
  const failed: { error?: DomainError; events: RecordedEvent[] } = { events: [] };
  const out = await withTx(pool, async (tx) => {
    // A quote on a test clock (issue 44): its clock held (no advance starts until this commits; 409
    // clock_advancing while one runs), taken before the quote's lock as an advance takes them.
    const held = await holdClockOfQuote(tx, a.quoteId);
    const q = await lockQuote(tx, a.owner, a.quoteId);
    if (!q) throw notFound('quote');
    // Under the quote's lock (READ COMMITTED: this statement sees what a concurrent delivery of this
    // job committed while this one waited): the policy this job issued already.
    const done = await issuedByJob(tx, a.jobId);
    if (done) return { ...done, events: [] };
    const now = (held ?? clock(q)).now();
    const checked = await check(tx, names, q, a.offerSha256, now);
    if (checked.error) {
      Object.assign(failed, checked);
      return undefined;
    }
    const events: RecordedEvent[] = [];
    events.push(...(await setQuoteStatus(tx, names, [q.quote_id], 'bound', ['open'])).events);
    const siblings = (
      await tx.query<{ quote_id: string }>(
        prepared(`SELECT quote_id FROM quotes WHERE submission_id = $1 AND quote_id <> $2 AND status IN ('open', 'referred') ORDER BY quote_id`, [q.submission_id, q.quote_id]),
      )
    ).rows.map((r) => r.quote_id);
    events.push(...(await setQuoteStatus(tx, names, siblings, 'not_taken', ['open', 'referred'])).events);

    const meta = (
      await tx.query<{ n: string; expiration_date: string; product_name: string | null; now: Date }>(
        prepared(
          `SELECT nextval('policy_number_seq')::text AS n, ($1::date + interval '1 year')::date AS expiration_date,
                  (SELECT name FROM products WHERE product_id = $2) AS product_name, date_trunc('milliseconds', now()) AS now`,
          [a.effectiveDate, q.product_id],
        ),
      )
    ).rows[0]!;
    const policyId = randomUUID();
    const policyNumber = `P-${a.effectiveDate.slice(0, 4)}-${meta.n.padStart(8, '0')}`;
    const status = statusAtIssue(now, { effectiveDate: a.effectiveDate, expirationDate: meta.expiration_date });
    const inserted = await tx
      .query<PolicyRow>(
        prepared(
          `INSERT INTO policies (policy_id, tenant_id, partner_id, policy_number, status, product_id, insured_legal_name,
             effective_date, expiration_date, premium_amount, premium_currency, submission_id, quote_id, option_limit,
             option_retention, test_clock_id, bind_job_id, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18)
           RETURNING ${COLUMNS}`,
          [
            policyId, a.owner.tenantId, a.owner.partnerId, policyNumber, status, q.product_id, a.insuredLegalName,
            a.effectiveDate, meta.expiration_date, q.premium_amount, q.premium_currency, q.submission_id, q.quote_id,
            q.option_limit, q.option_retention, q.test_clock_id, a.jobId, meta.now,
          ],
        ),
      )
      .catch((err: unknown) => {
        // Another bind of this submission issued its policy (the reservation should have stopped it).
        if ((err as { constraint?: string }).constraint === 'policies_issued_submission_key') throw quoteNotOpen('not_taken');
        throw err;
      });
    const policy = inserted.rows[0]!;
    const pdf = await renderDeclarations({
      policyNumber,
      insured: a.insuredLegalName,
      product: meta.product_name ?? q.product_id,
      limit: q.option_limit,
      retention: q.option_retention,
      premium: { amount: q.premium_amount!, currency: q.premium_currency! },
      effectiveDate: a.effectiveDate,
      expirationDate: meta.expiration_date,
      issuedAt: meta.now,
    });
    const doc = (
      await tx.query<DocumentRow>(
        prepared(
          `INSERT INTO policy_documents (document_id, policy_id, tenant_id, partner_id, kind, file_name, content_type, size_bytes, sha256, bytes, created_at)
           VALUES ($1, $2, $3, $4, 'declarations', $5, $6, $7, $8, $9, $10) RETURNING ${DOCUMENT_COLUMNS}`,
          [randomUUID(), policyId, a.owner.tenantId, a.owner.partnerId, pdf.fileName, pdf.contentType, pdf.bytes.length, pdf.sha256, Buffer.from(pdf.bytes), meta.now],
        ),
      )
    ).rows[0]!;
    events.push(await recordEvent(tx, names, a.owner, 'policy.issued', iso(policy.created_at), policyRecord(policy)));
    return { policy, documents: [doc], events };
  });
  if (!out) throw Object.assign(failed.error!, { events: failed.events });
  return out;
}
