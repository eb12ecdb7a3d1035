// A submission's requirements in the attachment transactions (API.md "Products and their
// requirements"): an upload is judged by the attachment rule of its document type (as kept with the
// submission at create: `max` reached, media type, size), and after every promote or delete the
// submission's currentlyDue is counted again; when it changes, submission.requirements_updated
// (data: the submission) is recorded in the same transaction.
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';
import { currentlyDue, type AttachmentRule } from '@partner/shared/domain/requirements';
import { recordEvent, type RecordedEvent } from '@partner/shared/nats/event-outbox';
import { sqlIso } from '@partner/shared/db/pg';
import type { natsNames } from '@partner/shared/nats/client';
import type { PoolClient } from '@partner/shared/db/pg';
import { SUBMISSION_DATA_SQL } from './submission-row.js';

interface Owner {
  tenantId: string;
  partnerId: string;
}

interface Locked {
  rules: AttachmentRule[];
  due: string[];
}

/**
 * Locks the submission's row for the rest of the transaction (concurrent uploads of one submission
 * are judged one after the other, so `max` holds) and reads its rules. Undefined when it is not the owner's.
 */
export async function lockRequirements(c: PoolClient, owner: Owner, submissionId: string): Promise<Locked | undefined> {
  const r = await c.query<{ attachment_rules: AttachmentRule[]; currently_due: string[] }>(
    `SELECT attachment_rules, currently_due FROM submissions
      WHERE submission_id = $1 AND tenant_id = $2 AND partner_id = $3 FOR UPDATE`,
    [submissionId, owner.tenantId, owner.partnerId],
  );
  const row = r.rows[0];
  return row ? { rules: row.attachment_rules, due: row.currently_due } : undefined;
}

/** Throws requirements_not_met when the staged upload breaks its document type's rule. */
export async function checkUpload(c: PoolClient, locked: Locked, p: { submissionId: string; uploadId: string; documentType: string }): Promise<void> {
  const rule = locked.rules.find((r) => r.documentType === p.documentType);
  if (!rule) return;
  const r = await c.query<{ content_type: string; size_bytes: string | null; active: string }>(
    `SELECT content_type, size_bytes,
            (SELECT count(*) FROM attachments WHERE submission_id = $1 AND state = 'active' AND document_type = $3) AS active
       FROM attachments WHERE attachment_id = $2 AND submission_id = $1 AND state = 'staged'`,
    [p.submissionId, p.uploadId, p.documentType],
  );
  const upload = r.rows[0];
  if (!upload) return; // not staged: the caller's promote finds nothing and answers for it
  const details: (ErrorDetail & { code: string })[] = [];
  if (rule.max !== null && Number(upload.active) >= rule.max) {
    details.push({ field: 'documentType', code: 'max_reached', issue: `the submission already has ${upload.active} ${p.documentType} attachment(s), the most its product allows (max ${rule.max})` });
  }
  if (rule.mediaTypes.length > 0 && !rule.mediaTypes.includes(upload.content_type)) {
    details.push({ field: 'contentType', code: 'media_type_not_allowed', issue: `${upload.content_type} is not allowed for ${p.documentType}; allowed: ${rule.mediaTypes.join(', ')}` });
  }
  if (rule.maxBytes !== null && Number(upload.size_bytes ?? 0) > rule.maxBytes) {
    details.push({ field: 'size', code: 'too_large', issue: `${upload.size_bytes} bytes is more than the ${rule.maxBytes} bytes allowed for ${p.documentType}` });
  }
  if (details.length > 0) {
    throw new DomainError('requirements_not_met', `the attachment breaks the product's rule for ${p.documentType}: ${details.map((d) => d.field).join(', ')}`, { details });
  }
}

/**
 * Counts the submission's active attachments again; when the types still due changed, stores the new
 * list and records submission.requirements_updated (data: the submission as its GET shows it).
 */
export async function refreshDue(
  c: PoolClient,
  names: ReturnType<typeof natsNames>,
  owner: Owner,
  submissionId: string,
  locked: Locked,
): Promise<RecordedEvent | undefined> {
  if (!locked.rules.some((r) => r.min > 0)) return undefined;
  const counts = await c.query<{ document_type: string; n: string }>(
    `SELECT document_type, count(*) AS n FROM attachments WHERE submission_id = $1 AND state = 'active' GROUP BY document_type`,
    [submissionId],
  );
  const due = currentlyDue(locked.rules, Object.fromEntries(counts.rows.map((r) => [r.document_type, Number(r.n)])));
  if (due.length === locked.due.length && due.every((d, i) => d === locked.due[i])) return undefined;
  const r = await c.query<{ data: Record<string, unknown>; ts: string }>(
    `UPDATE submissions s SET currently_due = $2, updated_at = date_trunc('milliseconds', clock_timestamp())
      WHERE submission_id = $1
      RETURNING ${sqlIso('s.updated_at')} AS ts, ${SUBMISSION_DATA_SQL} AS data`,
    [submissionId, due],
  );
  const row = r.rows[0]!;
  return recordEvent(c, names, owner, 'submission.requirements_updated', row.ts, row.data);
}
