// A submission's row: its columns as every statement selects them, the submission as its GET shows it
// written as SQL (the data of every submission.* event), and the row as the gRPC message. Constants and
// pure mappings only, so the modules that read and write submissions (intake.ts, clearance.ts,
// requirements.ts, list.ts, repo.ts) share them without importing each other.
import { sqlIso } from '@partner/shared/db/pg';
import type { Submission } from '@partner/shared/grpc/proto-types';
import { applicantToMessage, type Applicant } from '@partner/shared/domain/applicant';

export interface SubmissionRow {
  submission_id: string;
  tenant_id: string;
  partner_id: string;
  principal_id: string | null;
  external_ref: string;
  submission_type: string;
  effective_date: string;
  product_id: string;
  applicant: Applicant;
  submission_name: string;
  status: string;
  created_at: Date;
  updated_at: Date;
  clearance_status: string;
  clearance_basis: string | null;
  clearance_duplicate_of: string | null;
  clearance_decided_at: Date | null;
  withdrawal: { reason: string; note?: string; withdrawnAt: string } | null;
  requirements_version: string;
  currently_due: string[];
  risk_data: Record<string, unknown> | null;
  /** The test clock it lives on (issue 44), null on the wall clock. */
  test_clock_id: string | null;
}

/** The columns of SubmissionRow, in its order. */
export const SUBMISSION_COLUMN_NAMES = ['submission_id', 'tenant_id', 'partner_id', 'principal_id', 'external_ref', 'submission_type', 'effective_date',
  'product_id', 'applicant', 'submission_name', 'status', 'created_at', 'updated_at',
  'clearance_status', 'clearance_basis', 'clearance_duplicate_of', 'clearance_decided_at', 'withdrawal', 'requirements_version', 'currently_due', 'risk_data', 'test_clock_id'];
/** The columns of SubmissionRow as a select list (effective_date as text). */
export const SUBMISSION_COLUMNS = `submission_id, tenant_id, partner_id, principal_id, external_ref, submission_type,
                 effective_date::text AS effective_date, product_id, applicant, submission_name, status, created_at, updated_at,
                 clearance_status, clearance_basis, clearance_duplicate_of, clearance_decided_at, withdrawal, requirements_version, currently_due, risk_data, test_clock_id`;

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
    applicant: applicantToMessage(r.applicant),
    principalId: r.principal_id ?? '',
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    clearance: {
      status: r.clearance_status,
      basis: r.clearance_basis ?? '',
      duplicateOf: r.clearance_duplicate_of ?? '',
      decidedAt: (r.clearance_decided_at ?? r.created_at).toISOString(),
    },
    withdrawal: r.withdrawal ? { reason: r.withdrawal.reason, note: r.withdrawal.note ?? '', withdrawnAt: r.withdrawal.withdrawnAt } : null,
    requirements: { version: r.requirements_version, currentlyDue: r.currently_due },
    riskJson: r.risk_data ? JSON.stringify(r.risk_data) : '',
    testClockId: r.test_clock_id ?? '',
  };
}

/** The submission as GET /v1/submissions/{id} shows it, as SQL over a row `s` (the data of every submission.* event). */
export const SUBMISSION_DATA_SQL = `jsonb_build_object('submissionId', s.submission_id, 'submissionName', s.submission_name, 'status', s.status,
              'externalRef', s.external_ref, 'submissionType', s.submission_type, 'effectiveDate', s.effective_date,
              'productId', s.product_id, 'applicant', s.applicant,
              'principalId', s.principal_id, 'createdAt', ${sqlIso('s.created_at')}, 'updatedAt', ${sqlIso('s.updated_at')},
              'clearance', jsonb_build_object('status', s.clearance_status, 'basis', s.clearance_basis,
                             'decidedAt', ${sqlIso('coalesce(s.clearance_decided_at, s.created_at)')})
                           || CASE WHEN s.clearance_duplicate_of IS NULL THEN '{}'::jsonb
                                   ELSE jsonb_build_object('duplicateOf', s.clearance_duplicate_of) END)
            || jsonb_build_object('requirements', jsonb_build_object('version', s.requirements_version, 'currentlyDue', to_jsonb(s.currently_due)))
            || CASE WHEN s.withdrawal IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('withdrawal', s.withdrawal) END
            || jsonb_build_object('risk', s.risk_data)

            || CASE WHEN s.test_clock_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('testClockId', s.test_clock_id) END`;
