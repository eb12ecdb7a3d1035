// Data access for submissions. Creation is idempotent by job id.
import { newUuid } from '@partner/shared/ids';
import { prepared, type Pool } from '@partner/shared/pg';
import { newEventId, outboxInsertSql, sqlIso, type RecordedEvent } from '@partner/shared/events';
import type { natsNames } from '@partner/shared/nats';
import type { Submission } from '@partner/shared/proto-types';

export interface SubmissionRow {
  submission_id: string;
  tenant_id: string;
  partner_id: string;
  principal_id: string | null;
  external_ref: string;
  submission_type: string;
  effective_date: string;
  product_id: string;
  applicant: { legalName: string };
  submission_name: string;
  status: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `submission_id, tenant_id, partner_id, principal_id, external_ref, submission_type,
                 effective_date::text AS effective_date, product_id, applicant, submission_name, status, created_at, updated_at`;

export const LIST_COLUMNS = COLUMNS;

/** The submission's name: the applicant's legal name with its white space tidied. */
export const submissionName = (legalName: string): string => legalName.trim().replace(/\s+/g, ' ');

export function toProto(r: SubmissionRow): Submission {
  return {
    submissionId: r.submission_id,
    submissionName: r.submission_name,
    status: r.status,
    externalRef: r.external_ref,
    submissionType: r.submission_type,
    effectiveDate: r.effective_date,
    productId: r.product_id,
    applicant: { legalName: r.applicant.legalName },
    principalId: r.principal_id ?? '',
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export interface NewSubmission {
  jobId: string;
  tenantId: string;
  partnerId: string;
  principalId: string | null;
  externalRef: string;
  submissionType: string;
  effectiveDate: string;
  productId: string;
  legalName: string;
}

// One statement, so one round trip and one commit: insert the submission unless this job made one
// already, and record its submission.created event (data: the submission as its GET shows it).
const CREATE = `WITH ins AS (
     INSERT INTO submissions (submission_id, job_id, tenant_id, partner_id, principal_id, external_ref, submission_type,
                              effective_date, product_id, applicant, submission_name, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'submitted')
     ON CONFLICT (job_id) DO NOTHING
     RETURNING ${COLUMNS}
   ), event AS (
     ${outboxInsertSql({
       source: 'ins',
       eventId: '$12',
       subject: '$13',
       type: "'submission.created'",
       timestampSql: sqlIso('s.created_at'),
       dataSql: `jsonb_build_object('submissionId', s.submission_id, 'submissionName', s.submission_name, 'status', s.status,
                   'externalRef', s.external_ref, 'submissionType', s.submission_type, 'effectiveDate', s.effective_date,
                   'productId', s.product_id, 'applicant', jsonb_build_object('legalName', s.applicant->'legalName'),
                   'principalId', s.principal_id, 'createdAt', ${sqlIso('s.created_at')}, 'updatedAt', ${sqlIso('s.updated_at')})`,
     })}
   )
   SELECT ins.*, event.id AS outbox_id, event.body AS event_body FROM ins, event`;

/**
 * Creates the submission for a job, with its submission.created event in the same statement, or
 * returns the one that job already created (and no event).
 */
export async function createSubmission(
  pool: Pool,
  names: ReturnType<typeof natsNames>,
  s: NewSubmission,
): Promise<{ row: SubmissionRow; created: boolean; event?: RecordedEvent }> {
  const eventId = newEventId();
  const subject = names.eventSubject('submission.created');
  const ins = await pool.query<SubmissionRow & { outbox_id: string; event_body: string }>(
    prepared(CREATE, [
      newUuid(),
      s.jobId,
      s.tenantId,
      s.partnerId,
      s.principalId,
      s.externalRef,
      s.submissionType,
      s.effectiveDate,
      s.productId,
      JSON.stringify({ legalName: s.legalName }),
      submissionName(s.legalName),
      eventId,
      subject,
    ]),
  );
  const created = ins.rows[0];
  if (created) {
    const { outbox_id: outboxId, event_body: body, ...row } = created;
    return { row, created: true, event: { outboxId, msgId: eventId, subject, body } };
  }
  const existing = await pool.query<SubmissionRow>(prepared(`SELECT ${COLUMNS} FROM submissions WHERE job_id = $1`, [s.jobId]));
  return { row: existing.rows[0]!, created: false };
}

export async function getSubmission(pool: Pool, tenantId: string, partnerId: string, id: string): Promise<SubmissionRow | undefined> {
  const r = await pool.query<SubmissionRow>(
    prepared(`SELECT ${COLUMNS} FROM submissions WHERE submission_id = $1 AND tenant_id = $2 AND partner_id = $3`, [id, tenantId, partnerId]),
  );
  return r.rows[0];
}
