// The submission's side of a bind (job quote.bind; API.md "Quotes…", bind; DESIGN.md "From a
// submission to a policy"): a bind and a withdraw meet here first. ReserveBind takes the submission
// for one bind job under the risk's locks (the same a withdraw takes) in one conditional UPDATE
// (status submitted, no reservation); a withdraw changes only an unreserved submission
// (clearance.ts SQL.withdraw). So of any binds and a withdraw racing, exactly one wins. The
// bind.received receipt is issued in the reserving transaction and policy.issued in the one that
// makes the submission bound (CompleteBind), both in the partner's one chain, keyed by (job, kind).
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { prepared, withTx, type Pool, type PoolClient } from '@partner/shared/db/pg';
import type { natsNames } from '@partner/shared/nats/client';
import type { RecordedEvent } from '@partner/shared/nats/event-outbox';
import { change, lockSubmissionRisk } from './clearance.js';
import type { SubmissionRow } from './submission-row.js';
import { issueReceipts, lockHeads, RECEIPT_KINDS, receiptOfJob, type ReceiptIssuing, type ReceiptKind, type ReceiptSubject } from './receipts/issue.js';

type Names = ReturnType<typeof natsNames>;
type Owner = { tenantId: string; partnerId: string };

interface BindState {
  bind_job_id: string | null;
  bind_quote_id: string | null;
}

const bindStateOf = async (tx: PoolClient, submissionId: string): Promise<BindState> =>
  (await tx.query<BindState>(prepared('SELECT bind_job_id, bind_quote_id FROM submissions WHERE submission_id = $1', [submissionId]))).rows[0]!;

const quoteNotOpen = (status: string): DomainError =>
  new DomainError('quote_not_open', `the quote is ${status}, not open: another bind of this submission won`, { details: [{ field: 'status', issue: status }] });

async function receipt(tx: PoolClient, issuing: ReceiptIssuing | undefined, subject: ReceiptSubject, kind: ReceiptKind): Promise<string> {
  if (!issuing) return '';
  const had = await receiptOfJob(tx, subject.jobId, kind);
  if (had) return had;
  const heads = await lockHeads(tx, [subject]);
  const [issued] = await issueReceipts(tx, issuing, heads, [subject]);
  return issued!.jws;
}

export interface ReserveArgs {
  owner: Owner;
  jobId: string;
  submissionId: string;
  quoteId: string;
  offerSha256: string;
  receivedAt: string;
}

/**
 * Reserves the owner's submission for this bind job and issues bind.received. Fails not_quotable
 * (details: status / clearance.status) for a withdrawn or not cleared submission, quote_not_open
 * (the status the quote ends in: bound or not_taken) when another bind holds it.
 */
export async function reserveBind(pool: Pool, issuing: ReceiptIssuing | undefined, r: ReserveArgs): Promise<{ row: SubmissionRow; receipt: string }> {
  return withTx(pool, async (tx) => {
    const row = await lockSubmissionRisk(tx, r.owner, r.submissionId);
    if (!row) throw notFound('submission');
    const state = await bindStateOf(tx, row.submission_id);
    if (state.bind_job_id !== r.jobId) {
      if (row.status === 'withdrawn') throw new DomainError('not_quotable', 'the submission is withdrawn', { details: [{ field: 'status', issue: 'withdrawn' }] });
      if (state.bind_job_id !== null || row.status === 'bound') throw quoteNotOpen(state.bind_quote_id === r.quoteId ? 'bound' : 'not_taken');
      if (row.clearance_status !== 'cleared') {
        throw new DomainError('not_quotable', `the submission's clearance is ${row.clearance_status}`, { details: [{ field: 'clearance.status', issue: row.clearance_status }] });
      }
      // The reservation: one conditional UPDATE; the withdraw's is its mirror (clearance.ts).
      const took = await tx.query(
        prepared(`UPDATE submissions SET bind_job_id = $2, bind_quote_id = $3 WHERE submission_id = $1 AND status = 'submitted' AND bind_job_id IS NULL`, [
          row.submission_id,
          r.jobId,
          r.quoteId,
        ]),
      );
      if (took.rowCount !== 1) throw quoteNotOpen('not_taken');
    }
    const jws = await receipt(
      tx,
      issuing,
      {
        kind: RECEIPT_KINDS.bind,
        tenantId: r.owner.tenantId,
        partnerId: r.owner.partnerId,
        submissionId: row.submission_id,
        jobId: r.jobId,
        externalRef: row.external_ref,
        receivedAt: r.receivedAt,
        bind: { quoteId: r.quoteId, offerSha256: r.offerSha256 },
      },
      RECEIPT_KINDS.bind,
    );
    return { row, receipt: jws };
  });
}

export interface CompleteArgs {
  owner: Owner;
  jobId: string;
  submissionId: string;
  policyId: string;
  policyNumber: string;
  documents: { documentId: string; sha256: string }[];
  receivedAt: string;
}

/** The reserved submission becomes bound (submission.updated) and policy.issued is issued. Idempotent by job. */
export async function completeBind(pool: Pool, names: Names, issuing: ReceiptIssuing | undefined, c: CompleteArgs): Promise<{ row: SubmissionRow; receipt: string; events: RecordedEvent[] }> {
  return withTx(pool, async (tx) => {
    const row = await lockSubmissionRisk(tx, c.owner, c.submissionId);
    if (!row) throw notFound('submission');
    const state = await bindStateOf(tx, row.submission_id);
    if (state.bind_job_id !== c.jobId) throw new DomainError('conflict', 'the submission is not reserved for this bind', { retryable: false });
    const events: RecordedEvent[] = [];
    let bound = row;
    if (row.status !== 'bound') {
      const changed = await change(tx, names, 'bind', 'submission.updated', row.submission_id, [c.jobId]);
      if (!changed) throw new DomainError('conflict', 'the submission could not be bound', { retryable: false });
      bound = changed.row;
      events.push(changed.event);
    }
    const jws = await receipt(
      tx,
      issuing,
      {
        kind: RECEIPT_KINDS.policy,
        tenantId: c.owner.tenantId,
        partnerId: c.owner.partnerId,
        submissionId: row.submission_id,
        jobId: c.jobId,
        externalRef: row.external_ref,
        receivedAt: c.receivedAt,
        policy: { policyId: c.policyId, policyNumber: c.policyNumber, documents: c.documents },
      },
      RECEIPT_KINDS.policy,
    );
    return { row: bound, receipt: jws, events };
  });
}

/** A bind that failed after its reservation (its quote lapsed meanwhile) gives the submission back. */
export async function releaseBind(pool: Pool, owner: Owner, jobId: string, submissionId: string): Promise<void> {
  await pool.query(
    prepared(`UPDATE submissions SET bind_job_id = NULL, bind_quote_id = NULL WHERE submission_id = $1 AND tenant_id = $2 AND partner_id = $3 AND bind_job_id = $4 AND status = 'submitted'`, [
      submissionId,
      owner.tenantId,
      owner.partnerId,
      jobId,
    ]),
  );
}
