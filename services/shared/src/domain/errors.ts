// Domain errors and the one table that maps each error code to its HTTP status, gRPC status and
// retryability. Handlers throw DomainError; the gRPC adapter and the gateway translate with this table.
import { status as GrpcStatus, Metadata, type ServiceError } from '@grpc/grpc-js';
import { isDependencyOutage, OUTAGE_RETRY_AFTER_S } from './outage.js';

export interface ErrorDetail {
  field: string;
  issue: string;
}

interface CodeInfo {
  http: number;
  grpc: GrpcStatus;
  retryable: boolean;
  /** What a partner reads in the API reference's error table. */
  meaning: string;
}

/**
 * Every error code the API documents, in the order a partner meets them: the OpenAPI document's error
 * table is made from this. Job errors may carry other codes (see httpStatusForCode).
 */
export const ERROR_CODES = {
  unauthenticated: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, retryable: false, meaning: 'no or malformed `Authorization` header' },
  invalid_token: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, retryable: false, meaning: 'bad signature, expired, not yet valid, wrong issuer or audience, unknown key, algorithm not allowed' },
  insufficient_scope: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, retryable: false, meaning: 'the token\'s scope is not this environment\'s access scope' },
  forbidden: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, retryable: false, meaning: 'the client is not provisioned with the permission the operation needs' },
  principal_not_registered: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, retryable: false, meaning: '`x-principal-id` does not name a principal registered for the partner' },
  not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND, retryable: false, meaning: 'unknown or malformed id, a resource of another partner, or an unknown path' },
  method_not_allowed: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED, retryable: false, meaning: 'the method is not allowed on this path (see `Allow`)' },
  invalid_json: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, retryable: false, meaning: 'the body is not valid JSON, nests deeper than 32 levels, holds more than 10,000 values (by default) or repeats a key in an object' },
  validation_error: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, retryable: false, meaning: 'the body, a query parameter or `Idempotency-Key` is invalid; `details` lists every problem' },
  idempotency_key_reused: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'the `Idempotency-Key` was used before with a different request' },
  unknown_product: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: the product does not exist or is inactive' },
  requirements_not_met: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: the submission or attachment breaks its product\'s requirements; `details` names each failing field' },
  upload_expired: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: the staged upload expired before the attachment job ran' },
  conflict: { http: 409, grpc: GrpcStatus.ABORTED, retryable: false, meaning: 'job failure: the change conflicts with the current state' },
  job_not_cancelable: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'the job has started or settled and can no longer be cancelled; read the job for its outcome' },
  not_withdrawable: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: the submission is withdrawn (withdrawing it again, or adding an attachment to it)' },
  quote_not_open: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: a bind of a quote that is not `open` (incl. past `validUntil`, then `expired`); `details` names the quote\'s `status`' },
  offer_changed: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: the bind\'s `offerSha256` is not the hash of the quote\'s current offer' },
  not_quotable: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: the submission cannot be quoted: it is withdrawn or bound, or its clearance is not `cleared`; `details` names `status` or `clearance.status`' },
  option_not_offered: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: a quote option\'s limit or retention is not in the product\'s rating plan; `details` names `options[i].limit` / `options[i].retention`' },
  product_not_rated: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: the submission\'s product has no rating plan, so it cannot be quoted' },
  clock_advancing: { http: 409, grpc: GrpcStatus.ABORTED, retryable: true, meaning: 'job failure: a quote, bind or delete on a test clock that is advancing; retry once its advance settles (UAT)' },
  unknown_test_clock: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: the create body\'s `testClockId` names no live test clock of the partner (UAT)' },
  canceled: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'the error of a job its partner cancelled (a waiting request, `GET /v1/jobs/{id}`)' },
  limit_exceeded: { http: 422, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'job failure: a per-partner limit is reached (e.g. 16 webhook endpoints)' },
  cursor_expired: { http: 410, grpc: GrpcStatus.FAILED_PRECONDITION, retryable: false, meaning: 'a feed cursor older than the event retention; reconcile with the list endpoints' },
  unsupported_media_type: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT, retryable: false, meaning: 'wrong `Content-Type` (or a file type that may not be attached)' },
  payload_too_large: { http: 413, grpc: GrpcStatus.OUT_OF_RANGE, retryable: false, meaning: 'body over the size limit (JSON 1 MiB, attachment 25 MiB by default)' },
  rate_limited: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED, retryable: true, meaning: 'rate limit exceeded; retry after `Retry-After` seconds' },
  unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE, retryable: true, meaning: 'a dependency is unavailable; retry after `Retry-After` seconds' },
  internal: { http: 500, grpc: GrpcStatus.INTERNAL, retryable: true, meaning: 'anything else unexpected; report the `X-Request-Id` if it persists' },
} as const satisfies Record<string, CodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isKnownCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/**
 * HTTP status for an error code. Codes outside the table (a job may fail with any code) map to
 * 503 when retrying can succeed and 422 (a business rule said no) when it cannot.
 */
export function httpStatusForCode(code: string, retryable: boolean): number {
  if (isKnownCode(code)) return ERROR_CODES[code].http;
  return retryable ? 503 : 422;
}

export class DomainError extends Error {
  readonly retryable: boolean;
  readonly details: ErrorDetail[] | undefined;
  /** Seconds the caller should wait before retrying (Retry-After; gRPC `retry-after`), when known. */
  readonly retryAfterS: number | undefined;

  constructor(
    readonly code: string,
    message: string,
    opts: { retryable?: boolean; details?: ErrorDetail[]; cause?: unknown; retryAfterS?: number | undefined } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'DomainError';
    this.retryable = opts.retryable ?? (isKnownCode(code) ? ERROR_CODES[code].retryable : false);
    this.details = opts.details;
    this.retryAfterS = opts.retryAfterS;
  }

  get httpStatus(): number {
    return httpStatusForCode(this.code, this.retryable);
  }

  toEnvelope(): { code: string; message: string; retryable: boolean; details?: ErrorDetail[] } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

export const notFound = (what = 'resource'): DomainError => new DomainError('not_found', `${what} not found`);
export const unavailable = (message = 'a dependency is unavailable; retry later', cause?: unknown): DomainError =>
  new DomainError('unavailable', message, { cause, retryAfterS: OUTAGE_RETRY_AFTER_S });

const MD_CODE = 'x-error-code';
const MD_RETRYABLE = 'x-error-retryable';
const MD_DETAILS = 'x-error-details';
/** Seconds before a retry, sent with every `unavailable` (and other retryable) answer: the gateway's Retry-After. */
const MD_RETRY_AFTER = 'retry-after';

/**
 * The domain error a database error stands for, by its SQLSTATE class, when the class says whether
 * retrying can help: a data exception (22: a value out of range, NUL in text, a bad date) or an
 * integrity violation (23) is caused by the request itself and fails the same way every time, so it
 * is not retryable; a transaction rollback (40: serialization failure, deadlock), insufficient
 * resources (53) or an operator intervention (57: statement timeout, shutdown) pass. Undefined for
 * anything else (not a database error, or one that says nothing about retrying).
 */
export function sqlStateError(err: unknown): DomainError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  const cls = code.slice(0, 2);
  // A unique or exclusion violation can be a race another attempt resolves: not settled here.
  if (cls === '22' || (cls === '23' && code !== '23505' && code !== '23P01')) {
    return new DomainError('validation_error', `a value of the request cannot be stored (SQLSTATE ${code})`, { retryable: false, cause: err });
  }
  // 40: serialization failure or deadlock; 53: resources; 57: cancelled (statement_timeout); 55P03: lock_timeout.
  if (cls === '40' || cls === '53' || cls === '57' || code === '55P03') return unavailable('the database is busy; retry later', err);
  return undefined;
}

/**
 * The domain error a handler's failure stands for: a DomainError as it is; PostgreSQL or NATS
 * unreachable (domain/outage.ts), whichever code path let the raw error through, `unavailable` with
 * a retry hint; a database error whose class settles its retryability what it stands for
 * (sqlStateError); anything else `internal`, unexplained.
 */
export function asHandlerError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  if (isDependencyOutage(err)) return unavailable('a dependency (the database or NATS) is unavailable; retry later', err);
  return sqlStateError(err) ?? new DomainError('internal', 'internal error');
}

/**
 * gRPC status object for an error thrown by a handler (asHandlerError), its code and retryability in
 * trailing metadata; an `unavailable` answer carries `retry-after` (seconds) too.
 */
export function toGrpcError(err: unknown): Partial<ServiceError> & { code: GrpcStatus } {
  const e = asHandlerError(err);
  const metadata = new Metadata();
  metadata.set(MD_CODE, e.code);
  metadata.set(MD_RETRYABLE, String(e.retryable));
  if (e.details) metadata.set(MD_DETAILS, JSON.stringify(e.details));
  const retryAfter = e.retryAfterS ?? (e.code === 'unavailable' ? OUTAGE_RETRY_AFTER_S : undefined);
  if (retryAfter !== undefined) metadata.set(MD_RETRY_AFTER, String(retryAfter));
  const grpc = isKnownCode(e.code) ? ERROR_CODES[e.code].grpc : e.retryable ? GrpcStatus.UNAVAILABLE : GrpcStatus.FAILED_PRECONDITION;
  return { code: grpc, details: e.message, metadata };
}

/** Domain error for a failed gRPC call: the server's own code when it sent one, else by status. */
export function fromGrpcError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  const se = err as Partial<ServiceError>;
  const code = se.metadata?.get(MD_CODE)[0];
  if (typeof code === 'string' && code) {
    const retryable = se.metadata?.get(MD_RETRYABLE)[0] === 'true';
    const rawDetails = se.metadata?.get(MD_DETAILS)[0];
    let details: ErrorDetail[] | undefined;
    if (typeof rawDetails === 'string') {
      try {
        details = JSON.parse(rawDetails) as ErrorDetail[];
      } catch {
        details = undefined;
      }
    }
    const after = Number(se.metadata?.get(MD_RETRY_AFTER)[0]);
    return new DomainError(code, se.details ?? code, { retryable, details, cause: err, retryAfterS: Number.isFinite(after) && after >= 0 ? after : undefined });
  }
  // Our handlers always send their error code in metadata; a failure without it comes from the
  // transport (a connection reset, a stream refused under load): retryable, not a bug of ours.
  switch (se.code) {
    case GrpcStatus.UNAVAILABLE:
    case GrpcStatus.DEADLINE_EXCEEDED:
    case GrpcStatus.RESOURCE_EXHAUSTED:
    case GrpcStatus.CANCELLED:
    case GrpcStatus.INTERNAL:
    case GrpcStatus.UNKNOWN:
      return unavailable(undefined, err);
    case GrpcStatus.NOT_FOUND:
      return notFound();
    default:
      return new DomainError('internal', 'internal error', { cause: err });
  }
}
