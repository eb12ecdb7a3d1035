// The one middleware in front of the routes. For every request, in order: the request id (the
// client's X-Request-Id when it is sane, a fresh one otherwise) and the request's time budget, the
// server span when tracing is on, the in-flight gauge, the public routes (GET /v1/openapi.json and the
// receipt keys, served without a token), authentication, the rate limit, the text check of the query
// string (http/text.ts), the routes; then, whatever the outcome, the error envelope, X-Request-Id and
// the security headers every API response carries, the RED metrics and one access-log line.
//
// One level rather than a chain of seven keeps the cost of a request down, and it is the only frame a
// request waiting under Prefer: wait stays suspended in: such a route returns at once and leaves
// ctx.state.answer, awaited here (see answerOnSettlement in jobs/prefer-wait.ts). The choice of
// making server spans is taken when the app is built: register a tracer provider before that.
import { randomUUID } from 'node:crypto';
import { DomainError } from '@partner/shared/domain/errors';
import type { Logger } from '@partner/shared/telemetry/logger';
import { context, startHttpServerSpan, traceIdOf, type HttpServerSpan } from '@partner/shared/telemetry/tracing';
import type { GatewayContext, GatewayMiddleware, PublicRoute } from '../context.js';
import type { GatewayMetrics } from '../metrics.js';
import { asDomainError, renderError } from './errors.js';
import { checkQueryText } from '../http/text.js';
import { afterEarlyAnswer } from '../http/early-answer.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface PipelineOptions {
  logger: Logger;
  metrics: GatewayMetrics;
  /** Time budget of a request, apart from any Prefer: wait. */
  requestTimeoutMs: number;
  /** Server spans, made only when a tracer provider is registered (otherwise they would be no-ops). */
  tracing?: { trustTraceparent: boolean };
  /** Asked in order before authentication: the first that takes the request answers it. */
  publicRoutes: readonly PublicRoute[];
  /** Sets ctx.state.caller, or throws. */
  authenticate(ctx: GatewayContext): Promise<void>;
  /** Takes a token of the caller's limit and sets the RateLimit headers, or throws. */
  rateLimit(ctx: GatewayContext): void;
  /** Told of every answered request (the request log: request-log/recorder.ts); must not throw or wait. */
  record?(ctx: GatewayContext, seconds: number): void;
}

export function pipeline(opts: PipelineOptions): GatewayMiddleware {
  const { logger, metrics, tracing } = opts;
  // The access line's fields are fixed and carry no secret: it skips the redaction every other line
  // goes through (which costs several times the rest of the line).
  const accessLog = logger.child({}, { redact: [] });

  /** The end of every request: the fixed headers, the RED metrics and in-flight gauge, the span, the access log. */
  const complete = (ctx: GatewayContext, started: bigint, server: HttpServerSpan | undefined): void => {
    // Set last, on every response, so that a waiting request does not hold them meanwhile.
    ctx.set('X-Request-Id', ctx.state.requestId);
    // The receipt keys are the one cacheable answer (they set their own).
    if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    // The route template (/v1/jobs/:id) the router matched, for bounded metric labels and logs.
    ctx.state.route ??= (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics.inflight.dec();
    metrics.observe(ctx, seconds);
    opts.record?.(ctx, seconds);
    // Every error has been rendered, so ctx.status is the final status.
    server?.end(ctx.state.route, ctx.status);
    if (!accessLog.isLevelEnabled('info')) return;
    accessLog.info(
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

  const serve = async (ctx: GatewayContext, next: () => Promise<unknown>, server?: HttpServerSpan): Promise<void> => {
    const started = process.hrtime.bigint();
    metrics.inflight.inc();
    try {
      for (const route of opts.publicRoutes) {
        const answered = route(ctx);
        if (answered === true) return;
        if (answered) return await answered;
      }
      await opts.authenticate(ctx);
      opts.rateLimit(ctx);
      // Every route's query parameters are usable text (no control characters, no lone surrogates).
      if (ctx.querystring) checkQueryText(ctx.querystring);
      await next();
      if (ctx.state.answer) await ctx.state.answer.done;
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw new DomainError('not_found', `no route for ${ctx.method} ${ctx.path}`);
        // The router's allowedMethods() has set Allow; answer in the envelope.
        if (ctx.status === 405 || ctx.status === 501) {
          throw new DomainError('method_not_allowed', `${ctx.method} is not allowed here; see the Allow header`);
        }
      }
    } catch (err) {
      // A route that failed after it had started a wait: nobody will await that answer.
      ctx.state.answer?.cancel();
      renderError(ctx, asDomainError(err, logger, ctx));
      // Refused before its body was read (429, 413, 401, …): a large JSON body is not read at all, the
      // rest is drained (http/early-answer.ts).
      afterEarlyAnswer(ctx);
    } finally {
      complete(ctx, started, server);
    }
  };

  return (ctx, next) => {
    const server = tracing && startHttpServerSpan({ method: ctx.method, headers: ctx.headers }, tracing);
    const traceId = server && traceIdOf(server.context);
    if (traceId) ctx.state.traceId = traceId;
    const given = ctx.get('x-request-id');
    ctx.state.requestId = SANE_REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state.deadline = Date.now() + opts.requestTimeoutMs;
    return server ? context.with(server.context, serve, undefined, ctx, next, server) : serve(ctx, next);
  };
}
