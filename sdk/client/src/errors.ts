// Typed errors. Everything the SDK throws, except an abort (which rethrows the signal's reason), is
// a PartnerError; `retryable` says whether trying again later can succeed.
import type { ErrorDetail, ErrorObject, JobFailed } from './types.js';

export class PartnerError extends Error {
  override readonly name: string = 'PartnerError';
  constructor(
    message: string,
    /** Whether trying again later can succeed. */
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface PartnerApiErrorInit {
  status: number;
  code: string;
  message: string;
  retryable: boolean;
  requestId?: string | undefined;
  details?: ErrorDetail[] | undefined;
  jobId?: string | undefined;
  retryAfterSeconds?: number | undefined;
}

/**
 * An error answer of the API: the HTTP status and the envelope's code, message, retryable and
 * details, the X-Request-Id to quote when reporting it, and `jobId` when a job failed.
 */
export class PartnerApiError extends PartnerError {
  override readonly name: string = 'PartnerApiError';
  /** HTTP status; 0 for a job that failed while being polled (its error came in a 200). */
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly details: ErrorDetail[] | undefined;
  /** The job that failed, when the error is a job's. Retrying needs a new Idempotency-Key. */
  readonly jobId: string | undefined;
  /** Retry-After of the answer, in seconds, when it had one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: PartnerApiErrorInit) {
    super(init.message, init.retryable);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details;
    this.jobId = init.jobId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }

  /** The error of a job that failed (read with GET /v1/jobs/{id}). */
  static fromJob(job: JobFailed, requestId?: string): PartnerApiError {
    return new PartnerApiError({ status: 0, ...job.error, jobId: job.id, requestId });
  }

  /** The error envelope, as the API sends it. */
  toJSON(): { error: ErrorObject; jobId?: string; status: number; requestId?: string } {
    return {
      status: this.status,
      error: { code: this.code, message: this.message, retryable: this.retryable, ...(this.details ? { details: this.details } : {}) },
      ...(this.jobId ? { jobId: this.jobId } : {}),
      ...(this.requestId ? { requestId: this.requestId } : {}),
    };
  }
}

/**
 * The token endpoint refused the credentials or the scope (RFC 6749 §5.2: `invalid_client`,
 * `invalid_scope`, ...), or kept failing. `code` is the OAuth error code.
 */
export class PartnerAuthError extends PartnerApiError {
  override readonly name: string = 'PartnerAuthError';
}

/** The API could not be reached (connection refused or dropped, attempt timed out), after every retry. */
export class PartnerNetworkError extends PartnerError {
  override readonly name: string = 'PartnerNetworkError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, true, options);
  }
}

/** The job did not settle within the time allowed. It may still settle: read it again with getJob(jobId). */
export class PartnerTimeoutError extends PartnerError {
  override readonly name: string = 'PartnerTimeoutError';
  constructor(
    message: string,
    readonly jobId: string,
  ) {
    super(message, true);
  }
}
