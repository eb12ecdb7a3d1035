// Types of the reconciliation lists: GET /v1/jobs and GET /v1/submissions.
import type { CanceledErrorObject, ErrorObject, PageParams } from './types.js';

/** What a job does: the mutation that queued it (new kinds may appear within /v1). */
export type JobKind = 'submission.create' | 'attachment.create' | 'attachment.delete' | (string & {});

/** A job in the list: settled as GET /v1/jobs/{id} shows it, or `processing` with its times. */
export type JobListItem<T = unknown> =
  | { id: string; kind: JobKind; status: 'succeeded'; result: T; createdAt: string; updatedAt: string }
  | { id: string; kind: JobKind; status: 'failed'; error: ErrorObject; createdAt: string; updatedAt: string }
  | { id: string; kind: JobKind; status: 'canceled'; error: CanceledErrorObject; createdAt: string; updatedAt: string }
  | { id: string; kind: JobKind; status: 'processing'; createdAt: string; updatedAt: string };

export interface JobListParams extends PageParams {
  /** `processing` = not settled yet; `canceled` = cancelled before it started. */
  status?: 'processing' | 'succeeded' | 'failed' | 'canceled';
  kind?: JobKind;
  /** RFC 3339 timestamps with a time zone: createdSince inclusive, createdBefore exclusive. */
  createdSince?: string;
  createdBefore?: string;
}

export interface SubmissionListParams extends PageParams {
  /** Exact match: find a submission whose job handle was lost. */
  externalRef?: string;
  status?: 'submitted' | 'withdrawn';
  clearance?: 'cleared' | 'duplicate' | 'blocked' | 'review';
  /** RFC 3339 timestamps with a time zone, inclusive. */
  createdSince?: string;
  updatedSince?: string;
  principalId?: string;
}
