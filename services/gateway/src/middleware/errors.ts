// First in the chain: renders every error as the documented envelope
// {"error": {code, message, retryable, details?}} with the status from the one error table, sets the
// security headers every API response carries, and writes one log line per request.
import { DomainError } from '@partner/shared/errors';
import type { Logger } from '@partner/shared/logger';
import type { GatewayContext, GatewayMiddleware } from '../context.js';

export interface RequestObserver {
  (ctx: GatewayContext, durationSeconds: number): void;
}

/** Renders an error onto ctx (status, envelope, extra top-level fields such as jobId). */
export function renderError(ctx: GatewayContext, err: DomainError, extra: Record<string, unknown> = {}): void {
  // A route may have set a representation's headers (a download) before failing: they do not
  // describe the error.
  for (const h of ['ETag', 'Content-Disposition', 'Last-Modified']) ctx.remove(h);
  ctx.status = err.httpStatus;
  ctx.body = { error: err.toEnvelope(), ...extra };
  ctx.state.errorCode = err.code;
  if (err.code === 'unavailable' || err.code === 'rate_limited') ctx.set('Retry-After', ctx.response.get('Retry-After') || '1');
}

function asDomainError(err: unknown, logger: Logger, ctx: GatewayContext): DomainError {
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

export function errorHandler(opts: { logger: Logger; observe?: RequestObserver }): GatewayMiddleware {
  const { logger } = opts;
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw new DomainError('not_found', `no route for ${ctx.method} ${ctx.path}`);
        // The router's allowedMethods() has set Allow; answer in the envelope.
        if (ctx.status === 405 || ctx.status === 501) {
          throw new DomainError('method_not_allowed', `${ctx.method} is not allowed here; see the Allow header`);
        }
      }
    } catch (err) {
      renderError(ctx, asDomainError(err, logger, ctx));
    }
    // The route template (/v1/jobs/:id) the router matched, for bounded metric labels and logs.
    ctx.state.route ??= (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    opts.observe?.(ctx, seconds);
    logger.info(
      {
        requestId: ctx.state.requestId,
        method: ctx.method,
        route: ctx.state.route ?? 'unmatched',
        status: ctx.status,
        ...(ctx.state.errorCode ? { code: ctx.state.errorCode } : {}),
        ...(ctx.state.caller ? { tenant: ctx.state.caller.tenant, partnerId: ctx.state.caller.partnerId, clientId: ctx.state.caller.clientId } : {}),
        ms: Math.round(seconds * 1e4) / 10,
        ...(ctx.state.traceId ? { traceId: ctx.state.traceId } : {}),
      },
      'request',
    );
  };
}
