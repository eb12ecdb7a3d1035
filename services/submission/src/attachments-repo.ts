// Data access for attachment records (the bytes are the blob store's). Every read and change is
// scoped to the owner (tenant, partner) and the submission; state changes are single conditional
// UPDATEs, so concurrent jobs, redeliveries and the sweep cannot both win the same row.
import { withTx, type Pool } from '@partner/shared/db/pg';
import { attachmentRecord } from '@partner/shared/domain/attachments';
import { recordEvent, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import type { natsNames } from '@partner/shared/nats/client';
import type { Attachment, Attachment__Output } from '@partner/shared/generated/partner/submission/v1/Attachment';
import { refuseWithdrawn } from './clearance.js';
import { checkUpload, lockRequirements, refreshDue } from './requirements.js';
import { issueAttachmentReceipt, lockHeads, receiptOfJob, type ReceiptIssuing } from './receipts/issue.js';

export interface Owner {
  tenantId: string;
  partnerId: string;
}

export interface AttachmentRow {
  attachment_id: string;
  submission_id: string;
  state: 'receiving' | 'staged' | 'active' | 'deleted' | 'purging';
  file_name: string;
  content_type: string;
  size_bytes: string | null;
  sha256: string | null;
  document_type: string | null;
  created_at: Date | null;
}

const COLUMNS = 'attachment_id, submission_id, state, file_name, content_type, size_bytes, sha256, document_type, created_at';
const NOW_MS = "date_trunc('milliseconds', clock_timestamp())";

export function toProto(r: AttachmentRow): Attachment {
  return {
    attachmentId: r.attachment_id,
    submissionId: r.submission_id,
    fileName: r.file_name,
    contentType: r.content_type,
    sizeBytes: r.size_bytes ?? '0',
    sha256: r.sha256 ?? '',
    documentType: r.document_type ?? '',
    createdAt: r.created_at?.toISOString() ?? '',
  };
}

export async function submissionExists(pool: Pool, owner: Owner, submissionId: string): Promise<boolean> {
  const r = await pool.query('SELECT 1 FROM submissions WHERE submission_id = $1 AND tenant_id = $2 AND partner_id = $3', [
    submissionId,
    owner.tenantId,
    owner.partnerId,
  ]);
  return r.rowCount === 1;
}

/** Records an upload that is starting; false when the submission is unknown or not the owner's. */
export async function beginUpload(
  pool: Pool,
  u: { attachmentId: string; owner: Owner; submissionId: string; fileName: string; contentType: string },
): Promise<boolean> {
  const r = await pool.query(
    `INSERT INTO attachments (attachment_id, submission_id, tenant_id, partner_id, state, file_name, content_type)
     SELECT $1, submission_id, tenant_id, partner_id, 'receiving', $5, $6
       FROM submissions WHERE submission_id = $2 AND tenant_id = $3 AND partner_id = $4`,
    [u.attachmentId, u.submissionId, u.owner.tenantId, u.owner.partnerId, u.fileName, u.contentType],
  );
  return r.rowCount === 1;
}

/** Marks a received upload staged; false when it is no longer receiving (the sweep took it). */
export async function markStaged(pool: Pool, attachmentId: string, sizeBytes: number, sha256: string): Promise<boolean> {
  const r = await pool.query(
    `UPDATE attachments SET state = 'staged', size_bytes = $2, sha256 = $3 WHERE attachment_id = $1 AND state = 'receiving'`,
    [attachmentId, sizeBytes, sha256],
  );
  return r.rowCount === 1;
}

/** Removes the record of an upload that never became an attachment (its bytes must be gone first). */
export async function deleteUnfinished(pool: Pool, attachmentId: string): Promise<void> {
  await pool.query(`DELETE FROM attachments WHERE attachment_id = $1 AND state IN ('receiving', 'staged', 'purging')`, [attachmentId]);
}

/** Claims an owner's staged upload for removal; false when there is none (promoted, gone). */
export async function claimStaged(pool: Pool, owner: Owner, attachmentId: string): Promise<boolean> {
  const r = await pool.query(
    `UPDATE attachments SET state = 'purging'
      WHERE attachment_id = $1 AND tenant_id = $2 AND partner_id = $3 AND state = 'staged'`,
    [attachmentId, owner.tenantId, owner.partnerId],
  );
  return r.rowCount === 1;
}

/** The declared media type of an owner's staged upload on the submission; undefined when it is not staged (promoted, gone). */
export async function stagedContentType(pool: Pool, owner: Owner, submissionId: string, attachmentId: string): Promise<string | undefined> {
  const r = await pool.query<{ content_type: string }>(
    `SELECT content_type FROM attachments
      WHERE attachment_id = $1 AND submission_id = $2 AND tenant_id = $3 AND partner_id = $4 AND state = 'staged'`,
    [attachmentId, submissionId, owner.tenantId, owner.partnerId],
  );
  return r.rows[0]?.content_type;
}

/**
 * Promotes a staged upload for a job. Idempotent by job id: the attachment this job made before is
 * returned as it is. Undefined when the upload is not (or no longer) a staged one of this owner
 * and submission.
 */
export async function promote(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  p: { jobId: string; owner: Owner; principalId: string | null; submissionId: string; uploadId: string; documentType: string; receivedAt: string },
  receipts?: ReceiptIssuing,
): Promise<{ row: AttachmentRow; event?: RecordedEvent; requirementsEvent?: RecordedEvent; receipt: string } | undefined> {
  const byJob = async () =>
    (await pool.query<AttachmentRow>(`SELECT ${COLUMNS} FROM attachments WHERE create_job_id = $1`, [p.jobId])).rows[0];
  const earlier = await byJob();
  if (earlier) return { row: earlier, receipt: await receiptOfJob(pool, p.jobId) };
  // The attachment.created event and the receipt are recorded in the promoting transaction: one
  // each, only if it commits. The owner's receipt chain head is locked first.
  const promoted = await withTx(pool, async (c) => {
    // The product's rule for this document type (requirements_not_met), under the submission's row lock,
    // which also orders this upload against a withdrawal: a withdrawn submission's attachments can be
    // read, not added.
    const locked = await lockRequirements(c, p.owner, p.submissionId);
    // Under that lock, a concurrent delivery of this job may have promoted it meanwhile (and the
    // submission been withdrawn since): answer with what it did, not with a refusal.
    const mine = (await c.query<AttachmentRow>(`SELECT ${COLUMNS} FROM attachments WHERE create_job_id = $1`, [p.jobId])).rows[0];
    if (mine) return { row: mine, receipt: await receiptOfJob(c, p.jobId) };
    await refuseWithdrawn(c, p.submissionId, p.owner);
    if (locked) await checkUpload(c, locked, p);
    // Then the partner's receipt chain head (after the submission's row: one order on every path).
    const heads = receipts && (await lockHeads(c, [p.owner]));
    const r = await c.query<AttachmentRow>(
      `UPDATE attachments
          SET state = 'active', create_job_id = $1, principal_id = $2, document_type = $3, created_at = ${NOW_MS}
        WHERE attachment_id = $4 AND submission_id = $5 AND tenant_id = $6 AND partner_id = $7 AND state = 'staged'
        RETURNING ${COLUMNS}`,
      [p.jobId, p.principalId, p.documentType, p.uploadId, p.submissionId, p.owner.tenantId, p.owner.partnerId],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    const record = attachmentRecord(toProto(row) as Attachment__Output);
    const event = await recordEvent(c, names, p.owner, 'attachment.created', record.createdAt, record);
    const requirementsEvent = locked ? await refreshDue(c, names, p.owner, p.submissionId, locked) : undefined;
    const receipt =
      receipts && heads
        ? await issueAttachmentReceipt(c, receipts, heads, {
            ...p.owner,
            jobId: p.jobId,
            receivedAt: p.receivedAt,
            attachment: {
              attachmentId: row.attachment_id,
              submissionId: row.submission_id,
              fileName: row.file_name,
              contentType: row.content_type,
              sizeBytes: Number(row.size_bytes),
              sha256: row.sha256 ?? '',
            },
          })
        : '';
    return { row, event, requirementsEvent, receipt };
  });
  // A concurrent delivery of the same job may have promoted it between the two statements.
  if (promoted) return promoted;
  const again = await byJob();
  return again ? { row: again, receipt: await receiptOfJob(pool, p.jobId) } : undefined;
}

export async function getActive(pool: Pool, owner: Owner, submissionId: string, attachmentId: string): Promise<AttachmentRow | undefined> {
  const r = await pool.query<AttachmentRow>(
    `SELECT ${COLUMNS} FROM attachments
      WHERE attachment_id = $1 AND submission_id = $2 AND tenant_id = $3 AND partner_id = $4 AND state = 'active'`,
    [attachmentId, submissionId, owner.tenantId, owner.partnerId],
  );
  return r.rows[0];
}

/** One page, newest first, after the given position; one row more than asked, to tell if more follow. */
export async function listActive(
  pool: Pool,
  owner: Owner,
  submissionId: string,
  pageSize: number,
  after: { createdAtMs: number; attachmentId: string } | undefined,
): Promise<AttachmentRow[]> {
  const values: unknown[] = [submissionId, owner.tenantId, owner.partnerId];
  let keyset = '';
  if (after) {
    values.push(new Date(after.createdAtMs), after.attachmentId);
    keyset = 'AND (created_at, attachment_id) < ($4::timestamptz, $5::uuid)';
  }
  values.push(pageSize + 1);
  const r = await pool.query<AttachmentRow>(
    `SELECT ${COLUMNS} FROM attachments
      WHERE submission_id = $1 AND tenant_id = $2 AND partner_id = $3 AND state = 'active' ${keyset}
      ORDER BY created_at DESC, attachment_id DESC
      LIMIT $${values.length}`,
    values,
  );
  return r.rows;
}

/**
 * Marks an attachment deleted for a job. 'deleted' the first time; 'again' when this job deleted
 * it before (a redelivery); 'missing' when there is no such active attachment.
 */
export async function markDeleted(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  d: { jobId: string; owner: Owner; submissionId: string; attachmentId: string },
): Promise<{ outcome: 'deleted' | 'again' | 'missing'; event?: RecordedEvent; requirementsEvent?: RecordedEvent }> {
  // The attachment.deleted event is recorded in the deleting transaction.
  const deleted = await withTx(pool, async (c) => {
    const locked = await lockRequirements(c, d.owner, d.submissionId);
    const r = await c.query<{ deleted_at: Date }>(
      `UPDATE attachments SET state = 'deleted', delete_job_id = $1, deleted_at = ${NOW_MS}
        WHERE attachment_id = $2 AND submission_id = $3 AND tenant_id = $4 AND partner_id = $5 AND state = 'active'
        RETURNING deleted_at`,
      [d.jobId, d.attachmentId, d.submissionId, d.owner.tenantId, d.owner.partnerId],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    const data = { submissionId: d.submissionId, attachmentId: d.attachmentId };
    const event = await recordEvent(c, names, d.owner, 'attachment.deleted', row.deleted_at.toISOString(), data);
    const requirementsEvent = locked ? await refreshDue(c, names, d.owner, d.submissionId, locked) : undefined;
    return { outcome: 'deleted' as const, event, requirementsEvent };
  });
  if (deleted) return deleted;
  const again = await pool.query('SELECT 1 FROM attachments WHERE delete_job_id = $1 AND attachment_id = $2', [d.jobId, d.attachmentId]);
  return { outcome: again.rowCount === 1 ? 'again' : 'missing' };
}

export async function markPurged(pool: Pool, attachmentId: string): Promise<void> {
  await pool.query(`UPDATE attachments SET blob_purged = true WHERE attachment_id = $1 AND state = 'deleted'`, [attachmentId]);
}

// ----- The sweep

/**
 * Claims up to `limit` abandoned uploads for removal: receiving for longer than receivingTtlMs,
 * staged for longer than stagedTtlMs, or claimed before by a sweep that did not finish.
 */
export async function claimAbandoned(pool: Pool, opts: { receivingTtlMs: number; stagedTtlMs: number; limit: number }): Promise<string[]> {
  const r = await pool.query<{ attachment_id: string }>(
    `UPDATE attachments SET state = 'purging'
      WHERE attachment_id IN (
        SELECT attachment_id FROM attachments
         WHERE (state = 'receiving' AND uploaded_at < now() - make_interval(secs => $1::double precision / 1000))
            OR (state = 'staged' AND uploaded_at < now() - make_interval(secs => $2::double precision / 1000))
            OR state = 'purging'
         LIMIT $3
         FOR UPDATE SKIP LOCKED)
      RETURNING attachment_id`,
    [opts.receivingTtlMs, opts.stagedTtlMs, opts.limit],
  );
  return r.rows.map((row) => row.attachment_id);
}

/** Deleted attachments whose bytes may still be in the blob store (their job stopped half-way). */
export async function unpurgedDeleted(pool: Pool, opts: { olderThanMs: number; limit: number }): Promise<string[]> {
  const r = await pool.query<{ attachment_id: string }>(
    `SELECT attachment_id FROM attachments
      WHERE state = 'deleted' AND NOT blob_purged AND deleted_at < now() - make_interval(secs => $1::double precision / 1000)
      LIMIT $2`,
    [opts.olderThanMs, opts.limit],
  );
  return r.rows.map((row) => row.attachment_id);
}

/** Drops the records of attachments deleted (and purged) longer ago than retentionMs. */
export async function dropDeleted(pool: Pool, opts: { retentionMs: number; limit: number }): Promise<number> {
  const r = await pool.query(
    `DELETE FROM attachments WHERE attachment_id IN (
       SELECT attachment_id FROM attachments
        WHERE state = 'deleted' AND blob_purged AND deleted_at < now() - make_interval(secs => $1::double precision / 1000)
        LIMIT $2)`,
    [opts.retentionMs, opts.limit],
  );
  return r.rowCount ?? 0;
}
