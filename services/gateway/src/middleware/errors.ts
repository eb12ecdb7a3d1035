// Every error as the documented envelope {"error": {code, message, retryable, details?}} with the
// status from the one error table. The pipeline (pipeline.ts) renders whatever a request throws.
import { DomainError } from '@partner/shared/domain/errors';
import type { Logger } from '@partner/shared/telemetry/logger';
import type { GatewayContext } from '../context.js';

/** Renders an error onto ctx (status, envelope, extra top-level fields such as jobId). */
export function renderError(ctx: GatewayContext, err: DomainError, extra: Record<string, unknown> = {}): void {
  // A route may have set a representation's headers (a download) before failing: they do not
  // describe the error.
  for (const h of ['ETag', 'Content-Disposition', 'Last-Modified']) ctx.remove(h);
  ctx.status = err.httpStatus;
  ctx.body = { error: err.toEnvelope(), ...extra };
  ctx.state.errorCode = err.code;
  // A service that answered UNAVAILABLE says how long to wait (gRPC `retry-after`, fromGrpcError).
  if (err.code === 'unavailable' || err.code === 'rate_limited') ctx.set('Retry-After', ctx.response.get('Retry-After') || String(err.retryAfterS ?? 1));
}

/**
 * The error as the API reports it: a DomainError as it is, a client status from Koa or a body reader
 * mapped to its code, anything else internal (and logged).
 */
export function asDomainError(err: unknown, logger: Logger, ctx: GatewayContext): DomainError {
  if (err instanceof DomainError) {
    if (err.code === 'internal') logger.error({ err, requestId: ctx.state.requestId }, 'internal error');
    return err;
  }
  const status = (err as { status?: number; expose?: boolean }).status;
  // Errors Koa and body readers raise with a client status (malformed requests, aborted bodies).
  if (status === 413) return new DomainError('payload_too_large', 'the request body is too large');
  if (status === 415) return new DomainError('unsupported_media_type', 'unsupported Content-Type');
  if (status && status >= 400 && status < 500) return new DomainError('validation_error', 'the request could not be read');
  logger.error({ err, requestId: ctx.state.requestId }, 'unhandled error');
  return new DomainError('internal', 'internal error; retry later, and report the X-Request-Id if it persists');
}
