// The server span of every request the gateway answers (the ops listener's /livez, /readyz and
// /metrics are a separate server and never traced). Named after the route template once routed
// ("POST /v1/submissions"), so span names stay bounded like metric labels. A partner's traceparent
// is continued only with TRUST_TRACEPARENT=true; otherwise the request starts a new trace (linked to
// the partner's context), so partners cannot pick our trace ids or force sampling.
import { context, startHttpServerSpan, traceIdOf } from '@partner/shared/tracing';
import type { GatewayMiddleware } from '../context.js';

export function traceRequests(opts: { trustTraceparent: boolean }): GatewayMiddleware {
  return async (ctx, next) => {
    const server = startHttpServerSpan({ method: ctx.method, headers: ctx.headers }, opts);
    const traceId = traceIdOf(server.context);
    if (traceId) ctx.state.traceId = traceId;
    try {
      await context.with(server.context, next);
    } finally {
      // The error handler (inside) has rendered every error, so ctx.status is the final status.
      server.end(ctx.state.route, ctx.status);
    }
  };
}
