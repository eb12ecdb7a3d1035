// X-Request-Id on every response: the client's own when it is sane, a fresh one otherwise.
import { randomUUID } from 'node:crypto';
import type { GatewayMiddleware } from '../context.js';

const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(opts: { requestTimeoutMs: number }): GatewayMiddleware {
  return async (ctx, next) => {
    const given = ctx.get('x-request-id');
    ctx.state.requestId = SANE.test(given) ? given : randomUUID();
    ctx.state.deadline = Date.now() + opts.requestTimeoutMs;
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
