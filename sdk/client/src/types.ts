// The API's resources and request bodies, as the OpenAPI document at GET /v1/openapi.json
// describes them (components.schemas).
import type { Clearance, SubmissionStatus, Withdrawal } from './clearance.js';

export interface ErrorDetail {
  /** Body field path (`applicant.legalName`), query parameter or header name. */
  field: string;
  issue: string;
  /** With requirements_not_met: the kind of problem (`required`, `out_of_window`, `max_reached`, …). */
  code?: string;
}

/** The error envelope: the body of every error response, and the `error` of a failed job. */
export interface ErrorObject {
  code: string;
  message: string;
  retryable: boolean;
  details?: ErrorDetail[];
}

export interface Health {
  status: 'ok';
  tenant: string;
  partnerId: string;
  principalId: string | null;
}

export interface SubmissionCreate {
  /**
   * Your own reference, 1–200 characters. In UAT, `sandbox:delay=N` and `sandbox:fail=<code>` steer the job, and
   * `sandbox:hold=N` keeps it unstarted N seconds (1..60) so cancelJob can be tried; combine them with `;`.
   */
  externalRef: string;
  submissionType: 'application';
  /** Calendar date `YYYY-MM-DD`. */
  effectiveDate: string;
  /** A product UUID. */
  productId: string;
  applicant: Applicant;
}

export interface Address {
  line1: string;
  line2?: string;
  city: string;
  region: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2, e.g. `US`. */
  country: string;
}

export interface Applicant {
  /** 1–200 characters. */
  legalName: string;
  /** US FEIN: `NN-NNNNNNN` or 9 digits when sent; returned as 9 digits. Required where the product says so. */
  taxId?: string;
  /** Required where the product says so. */
  address?: Address;
}

export interface SubmissionResult {
  submissionId: string;
  submissionName: string;
  status: 'submitted';
  /** Whether it holds its risk (docs/api.md "Clearance"). */
  clearance: Clearance;
  /** The signed receipt (compact JWS) of what was received: keep it (verifyReceipt checks it offline). */
  receipt?: string;
}

export interface Submission extends Omit<SubmissionResult, 'status' | 'receipt'> {
  status: SubmissionStatus;
  externalRef: string;
  submissionType: 'application';
  effectiveDate: string;
  productId: string;
  applicant: Applicant;
  principalId: string | null;
  createdAt: string;
  updatedAt: string;
  /** The product's requirements version that judged it, and the attachment types still due (`attachments.<documentType>`). */
  requirements: { version: number; currentlyDue: string[] };
  /** Present once withdrawn. */
  withdrawal?: Withdrawal;
}

export interface JobHandle {
  id: string;
  status: 'accepted';
  statusUrl: string;
}

export interface JobProcessing {
  id: string;
  status: 'processing';
  retryAfter: number;
}

export interface JobSucceeded<T = unknown> {
  id: string;
  /** What the job does, e.g. submission.create (absent from servers before the job lists). */
  kind?: string;
  status: 'succeeded';
  result: T;
  createdAt: string;
  updatedAt: string;
}

export interface JobFailed {
  id: string;
  /** What the job does, e.g. submission.create (absent from servers before the job lists). */
  kind?: string;
  status: 'failed';
  error: ErrorObject;
  createdAt: string;
  updatedAt: string;
}

/** The `error` of a cancelled job: always code `canceled`, never retryable. */
export interface CanceledErrorObject extends ErrorObject {
  code: 'canceled';
  retryable: false;
}

/** A job its partner cancelled before it started (cancelJob): settled, it never takes effect. */
export interface JobCanceled {
  id: string;
  kind?: string;
  status: 'canceled';
  error: CanceledErrorObject;
  createdAt: string;
  /** When it was cancelled. */
  updatedAt: string;
}

/**
 * A job's status as GET /v1/jobs/{id} shows it: `processing` until it settles, then `succeeded`,
 * `failed` or `canceled`. New statuses may be added within /v1 only as an additive change.
 */
export type JobStatus = 'processing' | 'succeeded' | 'failed' | 'canceled';

export type SettledJob<T = unknown> = JobSucceeded<T> | JobFailed | JobCanceled;
export type Job<T = unknown> = SettledJob<T> | JobProcessing;

export type PolicyStatus = 'active' | 'cancelled' | 'expired' | 'pending';

export interface Policy {
  policyId: string;
  policyNumber: string;
  status: PolicyStatus;
  productId: string;
  insured: { legalName: string };
  effectiveDate: string;
  expirationDate: string;
  /** Amounts are decimal strings, never numbers. */
  premium: { amount: string; currency: string };
  /** Present only when the policy came from a submission. */
  submissionId?: string;
  createdAt: string;
  updatedAt: string;
}

export interface Page<T> {
  items: T[];
  /** Pass as `cursor` (with the same filters) for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface PageParams {
  /** 1..200, default 50. */
  limit?: number;
  cursor?: string;
}

export interface PolicyListParams extends PageParams {
  status?: PolicyStatus;
  productId?: string;
  policyNumber?: string;
  /** RFC 3339 timestamp with a time zone. */
  updatedSince?: string;
}

export type DocumentType = 'application' | 'loss_run' | 'schedule_of_values' | 'financials' | 'other';

export interface Attachment {
  attachmentId: string;
  submissionId: string;
  fileName: string;
  contentType: string;
  sizeBytes: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  documentType: DocumentType;
  createdAt: string;
  /** In an upload's result only: the attachment's signed receipt (compact JWS). */
  receipt?: string;
}

export interface AttachmentDeleted {
  attachmentId: string;
  deleted: true;
}
