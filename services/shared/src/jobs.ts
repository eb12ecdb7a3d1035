// Jobs as the API shows them, the settlement event every gateway hears, and the job kinds.
import type { Job__Output } from './generated/partner/job/v1/Job.js';

export const JOB_KINDS = {
  submissionCreate: 'submission.create',
  attachmentCreate: 'attachment.create',
  attachmentDelete: 'attachment.delete',
} as const;
export type JobKind = (typeof JOB_KINDS)[keyof typeof JOB_KINDS];

export interface JobErrorView {
  code: string;
  message: string;
  retryable: boolean;
}

/** A job as GET /v1/jobs/{id} shows it once settled (or, unsettled, as accepted/running). */
export interface JobView {
  id: string;
  status: 'accepted' | 'running' | 'succeeded' | 'failed';
  result?: unknown;
  error?: JobErrorView;
  createdAt: string;
  updatedAt: string;
}

/** Published on core NATS after a job's settling transaction commits. */
export interface SettlementEvent {
  job: JobView;
  tenantId: string;
  partnerId: string;
}

const STATUS = {
  JOB_STATUS_ACCEPTED: 'accepted',
  JOB_STATUS_RUNNING: 'running',
  JOB_STATUS_SUCCEEDED: 'succeeded',
  JOB_STATUS_FAILED: 'failed',
} as const;

export const isSettled = (j: Pick<JobView, 'status'>): boolean => j.status === 'succeeded' || j.status === 'failed';

/** The API view of a gRPC Job. */
export function jobView(j: Job__Output): JobView {
  const status = STATUS[j.status as keyof typeof STATUS] ?? 'accepted';
  return {
    id: j.id,
    status,
    ...(status === 'succeeded' ? { result: JSON.parse(j.resultJson) as unknown } : {}),
    ...(status === 'failed' && j.error ? { error: { code: j.error.code, message: j.error.message, retryable: j.error.retryable } } : {}),
    createdAt: j.createdAt,
    updatedAt: j.updatedAt,
  };
}
