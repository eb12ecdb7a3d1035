// Reads of single submissions, by id or by the job that created it (creating them: intake.ts; lists: list.ts).
import { prepared, type Pool } from '@partner/shared/db/pg';
import { SUBMISSION_COLUMNS, type SubmissionRow } from './submission-row.js';

/** The owner's submission created by a job, if that job created one. */
export async function getSubmissionOfJob(pool: Pool, tenantId: string, partnerId: string, jobId: string): Promise<SubmissionRow | undefined> {
  const r = await pool.query<SubmissionRow>(
    prepared(`SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE job_id = $1 AND tenant_id = $2 AND partner_id = $3`, [jobId, tenantId, partnerId]),
  );
  return r.rows[0];
}

export async function getSubmission(pool: Pool, tenantId: string, partnerId: string, id: string): Promise<SubmissionRow | undefined> {
  const r = await pool.query<SubmissionRow>(
    prepared(`SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE submission_id = $1 AND tenant_id = $2 AND partner_id = $3`, [id, tenantId, partnerId]),
  );
  return r.rows[0];
}
