// Jobs as the API shows them, the settlement event every gateway hears, and the job kinds.
import type { Job__Output } from '../generated/partner/job/v1/Job.js';
import type { JobStatus__Output } from '../generated/partner/job/v1/JobStatus.js';
import type { JobStatusFilter__Output } from '../generated/partner/job/v1/JobStatusFilter.js';
import { protoEnum } from './proto-enums.js';
import type { Permission } from './permissions.js';

export const JOB_KINDS = {
  submissionCreate: 'submission.create',
  submissionWithdraw: 'submission.withdraw',
  attachmentCreate: 'attachment.create',
  attachmentDelete: 'attachment.delete',
  webhookEndpointCreate: 'webhook_endpoint.create',
  webhookEndpointUpdate: 'webhook_endpoint.update',
  webhookEndpointDelete: 'webhook_endpoint.delete',
  webhookEndpointRotateSecret: 'webhook_endpoint.rotate_secret',
  webhookEndpointRecover: 'webhook_endpoint.recover',
  webhookEndpointPing: 'webhook_endpoint.ping',
  quoteBind: 'quote.bind',
  testClockCreate: 'test_clock.create',
  testClockAdvance: 'test_clock.advance',
  testClockDelete: 'test_clock.delete',
  quoteCreate: 'quote.create',
  quoteDecide: 'quote.decide',
} as const;
export type JobKind = (typeof JOB_KINDS)[keyof typeof JOB_KINDS];

/** The permission a job's mutation needs, which is also what cancelling the job needs. */
export const JOB_KIND_PERMISSION: Record<JobKind, Permission> = {
  'submission.create': 'submissions/write',
  'submission.withdraw': 'submissions/write',
  'attachment.create': 'submissions/write',
  'attachment.delete': 'submissions/write',
  'webhook_endpoint.create': 'webhooks/write',
  'webhook_endpoint.update': 'webhooks/write',
  'webhook_endpoint.delete': 'webhooks/write',
  'webhook_endpoint.rotate_secret': 'webhooks/write',
  'webhook_endpoint.recover': 'webhooks/write',
  'webhook_endpoint.ping': 'webhooks/write',
  'quote.bind': 'quotes/write',
  'test_clock.create': 'submissions/write',
  'test_clock.advance': 'submissions/write',
  'test_clock.delete': 'submissions/write',
  'quote.create': 'quotes/write',
  'quote.decide': 'quotes/write',
};

/** The write permission cancelling a job of this kind needs (undefined for an unknown kind). */
export const cancelPermissionOf = (kind: string): Permission | undefined =>
  Object.hasOwn(JOB_KIND_PERMISSION, kind) ? JOB_KIND_PERMISSION[kind as JobKind] : undefined;

/** The error a cancelled job carries (GET /v1/jobs/{id}, a waiting mutation, job.canceled). */
export const CANCELED_ERROR: JobErrorView = { code: 'canceled', message: 'the job was cancelled by its partner before it started', retryable: false };

export interface JobErrorView {
  code: string;
  message: string;
  retryable: boolean;
  /** The failing fields, where the error names some (requirements_not_met). */
  details?: unknown[];
}

/** A job as GET /v1/jobs/{id} shows it once settled (or, unsettled, as accepted/running). */
export interface JobView {
  id: string;
  /** What the job does, e.g. submission.create (JOB_KINDS). */
  kind: string;
  status: JobStatusName;
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

/** A job's status (the API's names; the proto's JOB_STATUS_*; the job table's status column). */
export const JOB_STATUSES = ['accepted', 'running', 'succeeded', 'failed', 'canceled'] as const;
export type JobStatusName = (typeof JOB_STATUSES)[number];
export const JOB_STATUS = protoEnum<JobStatusName, JobStatus__Output>('JOB_STATUS_', JOB_STATUSES);
/** The settled statuses: a job in one of them never changes again. */
export const SETTLED_JOB_STATUSES = ['succeeded', 'failed', 'canceled'] as const satisfies readonly JobStatusName[];
/** The job list's status filter (the proto's JOB_STATUS_FILTER_*): `processing` is accepted or running. */
export const JOB_STATUS_FILTERS = ['processing', 'succeeded', 'failed', 'canceled'] as const;
export type JobStatusFilterName = (typeof JOB_STATUS_FILTERS)[number];
export const JOB_STATUS_FILTER = protoEnum<JobStatusFilterName, JobStatusFilter__Output>('JOB_STATUS_FILTER_', JOB_STATUS_FILTERS);

export const isSettled = (j: Pick<JobView, 'status'>): boolean => (SETTLED_JOB_STATUSES as readonly string[]).includes(j.status);

/** A job that ended with an error: failed, or cancelled by its partner. */
export const hasError = (status: JobStatusName): boolean => status === 'failed' || status === 'canceled';

/** The API view of a gRPC Job. */
export function jobView(j: Job__Output): JobView {
  const status = JOB_STATUS.fromProto(j.status) ?? 'accepted';
  return {
    id: j.id,
    kind: j.kind,
    status,
    ...(status === 'succeeded' ? { result: JSON.parse(j.resultJson) as unknown } : {}),
    ...(hasError(status) && j.error
      ? { error: { code: j.error.code, message: j.error.message, retryable: j.error.retryable, ...(j.error.detailsJson ? { details: JSON.parse(j.error.detailsJson) as unknown[] } : {}) } }
      : {}),
    createdAt: j.createdAt,
    updatedAt: j.updatedAt,
  };
}

/** Who a job acts for, as the job service records it. */
export interface JobCaller {
  tenantId: string;
  partnerId: string;
  clientId: string;
  /** Empty when the request named no principal. */
  principalId: string;
}

/**
 * The JetStream message of a job: everything a worker needs to run it, so the first delivery can
 * start on the effect without reading the job first. Older messages carry `jobId` alone; a worker
 * then reads the job (StartJob).
 */
export interface JobMessage {
  jobId: string;
  kind: string;
  caller: JobCaller;
  payload: unknown;
  /** When the job was created (ISO 8601; absent in messages of older versions): a receipt's receivedAt. */
  createdAt?: string;
}

/**
 * The message body for a job whose payload is already JSON text (as received or as stored): the
 * payload is spliced in rather than parsed and serialised again.
 */
export function jobMessageJson(jobId: string, kind: string, caller: JobCaller, payloadJson: string, createdAt?: Date): string {
  const created = createdAt ? `,"createdAt":${JSON.stringify(createdAt.toISOString())}` : '';
  return `{"jobId":${JSON.stringify(jobId)},"kind":${JSON.stringify(kind)},"caller":${JSON.stringify(caller)}${created},"payload":${payloadJson}}`;
}

/** The job message in a JetStream message body: the full form, the id alone (older form), or nothing usable. */
export function parseJobMessage(body: string): JobMessage | { jobId: string } | undefined {
  let m: Partial<JobMessage>;
  try {
    m = JSON.parse(body) as Partial<JobMessage>;
  } catch {
    return undefined;
  }
  if (typeof m !== 'object' || m === null || typeof m.jobId !== 'string') return undefined;
  const c = m.caller;
  const full =
    typeof m.kind === 'string' &&
    'payload' in m &&
    typeof c === 'object' &&
    c !== null &&
    typeof c.tenantId === 'string' &&
    typeof c.partnerId === 'string' &&
    typeof c.clientId === 'string' &&
    typeof c.principalId === 'string';
  return full ? (m as JobMessage) : { jobId: m.jobId };
}
