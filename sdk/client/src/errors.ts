// Typed errors. Everything the SDK throws, except an abort (which rethrows the signal's reason), is
// a PartnerError; `retryable` says whether trying again later can succeed.
import type { ErrorDetail, ErrorObject, JobCanceled, JobFailed } from './wire-types.js';

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

/**
 * The error codes the API documents (its error table). New codes may be added within /v1 (an
 * additive change), so `code` is typed as this union or any other string: handle an unknown code by
 * its `retryable` and HTTP status.
 */
export type ApiErrorCode =
  | 'unauthenticated'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'forbidden'
  | 'principal_not_registered'
  | 'not_found'
  | 'method_not_allowed'
  | 'invalid_json'
  | 'validation_error'
  | 'idempotency_key_reused'
  | 'unknown_product'
  | 'requirements_not_met'
  | 'upload_expired'
  | 'conflict'
  | 'job_not_cancelable'
  | 'not_withdrawable'
  | 'not_quotable'
  | 'quote_not_open'
  | 'offer_changed'
  | 'option_not_offered'
  | 'product_not_rated'
  | 'clock_advancing'
  | 'unknown_test_clock'
  | 'canceled'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'cursor_expired'
  | 'limit_exceeded'
  | 'rate_limited'
  | 'unavailable'
  | 'internal';

/** A documented code, or one added later (autocompletion keeps the documented ones). */
export type ErrorCode = ApiErrorCode | (string & {});

export interface PartnerApiErrorInit {
  status: number;
  code: ErrorCode;
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
  readonly code: ErrorCode;
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

  /** The error of a job that failed or was cancelled (read with GET /v1/jobs/{id}); a cancelled one is a JobCanceledError. */
  static fromJob(job: JobFailed | JobCanceled, requestId?: string): PartnerApiError {
    return PartnerApiError.of({ status: 0, ...job.error, jobId: job.id, requestId });
  }

  /**
   * The error as an instance of its category's subclass (PartnerAuthError, PartnerPermissionError,
   * PartnerRateLimitError, PartnerValidationError, PartnerIdempotencyError, PartnerNotFoundError,
   * PartnerUnavailableError, JobCanceledError, JobNotCancelableError), by code, else by HTTP status;
   * a plain PartnerApiError otherwise.
   */
  static of(init: PartnerApiErrorInit): PartnerApiError {
    const Category = categoryOf(init.code, init.status);
    return new Category(init);
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

/** 403: the token's scope, the client's permissions or the x-principal-id do not allow the call. */
export class PartnerPermissionError extends PartnerApiError {
  override readonly name: string = 'PartnerPermissionError';
}

/** 429 rate_limited: retry after `retryAfterSeconds` (the SDK already did, up to maxRetries). */
export class PartnerRateLimitError extends PartnerApiError {
  override readonly name: string = 'PartnerRateLimitError';
}

/** The request itself is wrong (400, 413, 415): `details` lists the failing fields. Do not retry unchanged. */
export class PartnerValidationError extends PartnerApiError {
  override readonly name: string = 'PartnerValidationError';
}

/**
 * 422 requirements_not_met: a job failed because the submission or attachment breaks its product's
 * requirements. `fields` names each failing field (`applicant.taxId`, `effectiveDate`; for an
 * attachment `documentType`, `contentType` or `size`); `details` says what is wrong with each. Check
 * a body first with validateSubmission, or offline with getProductRequirements' submissionSchema.
 */
export class RequirementsNotMetError extends PartnerApiError {
  override readonly name: string = 'RequirementsNotMetError';
  get fields(): string[] {
    return [...new Set((this.details ?? []).map((d) => d.field))];
  }
}

/** 422 idempotency_key_reused: the same Idempotency-Key was sent with a different request. */
export class PartnerIdempotencyError extends PartnerApiError {
  override readonly name: string = 'PartnerIdempotencyError';
}

/** 404 not_found: no such resource for your partner (another partner's is indistinguishable). */
export class PartnerNotFoundError extends PartnerApiError {
  override readonly name: string = 'PartnerNotFoundError';
}

/** 503 unavailable or 500 internal: try again later (the SDK already did, up to maxRetries). */
export class PartnerUnavailableError extends PartnerApiError {
  override readonly name: string = 'PartnerUnavailableError';
}

/**
 * 409 canceled: the job was cancelled (cancelJob) before it started, so it never took effect. A
 * mutation waiting on the job, or following it, throws this; `jobId` names the job. Not retryable
 * with the same job: send the mutation again (a new Idempotency-Key) if it is still wanted.
 */
export class JobCanceledError extends PartnerApiError {
  override readonly name: string = 'JobCanceledError';
}

/**
 * 409 job_not_cancelable (from cancelJob): the job had already started or settled, so the cancel
 * lost; it runs (or ran) to its own outcome. Read it with getJob or waitForJob.
 */
export class JobNotCancelableError extends PartnerApiError {
  override readonly name: string = 'JobNotCancelableError';
}

/**
 * 409 not_quotable: a quote request's job failed because the submission cannot be quoted: it is
 * withdrawn or bound (`details` names `status`), or its clearance is not `cleared` (`clearance.status`).
 */
export class NotQuotableError extends PartnerApiError {
  override readonly name: string = 'NotQuotableError';
}

/**
 * 422 option_not_offered: an option's limit or retention is not in the product's rating plan.
 * `fields` names each (`options[1].limit`, `options[0].retention`).
 */
export class OptionNotOfferedError extends PartnerApiError {
  override readonly name: string = 'OptionNotOfferedError';
  get fields(): string[] {
    return [...new Set((this.details ?? []).map((d) => d.field))];
  }
}

/** 422 product_not_rated: the submission's product has no rating plan, so it cannot be quoted. */
export class ProductNotRatedError extends PartnerApiError {
  override readonly name: string = 'ProductNotRatedError';
}

type ApiErrorClass = new (init: PartnerApiErrorInit) => PartnerApiError;

function categoryOf(code: string, status: number): ApiErrorClass {
  switch (code) {
    case 'unauthenticated':
    case 'invalid_token':
      return PartnerAuthError;
    case 'insufficient_scope':
    case 'forbidden':
    case 'principal_not_registered':
      return PartnerPermissionError;
    case 'rate_limited':
      return PartnerRateLimitError;
    case 'invalid_json':
    case 'validation_error':
    case 'unsupported_media_type':
    case 'payload_too_large':
      return PartnerValidationError;
    case 'idempotency_key_reused':
      return PartnerIdempotencyError;
    case 'requirements_not_met':
      return RequirementsNotMetError;
    case 'not_found':
      return PartnerNotFoundError;
    case 'canceled':
      return JobCanceledError;
    case 'job_not_cancelable':
      return JobNotCancelableError;
    case 'not_quotable':
      return NotQuotableError;
    case 'option_not_offered':
      return OptionNotOfferedError;
    case 'product_not_rated':
      return ProductNotRatedError;
    case 'unavailable':
    case 'internal':
      return PartnerUnavailableError;
  }
  if (status === 401) return PartnerAuthError;
  if (status === 403) return PartnerPermissionError;
  if (status === 429) return PartnerRateLimitError;
  if (status === 404) return PartnerNotFoundError;
  if (status >= 500) return PartnerUnavailableError;
  return PartnerApiError;
}

/**
 * The caller's signal aborted while the SDK was waiting for a job it had already started: the job
 * goes on and may still settle; follow it with `waitForJob(jobId)`. `name` is "AbortError" like the
 * DOMException an abort usually throws; `cause` is the signal's reason.
 */
export class PartnerAbortError extends PartnerError {
  override readonly name: string = 'AbortError';
  constructor(
    message: string,
    readonly jobId: string,
    options?: { cause?: unknown },
  ) {
    super(message, true, options);
  }
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
