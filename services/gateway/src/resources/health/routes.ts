// GET /v1/health: echoes who the credentials belong to.
import type Router from '@koa/router';
import type { GatewayState } from '../../context.js';
import { callerOf } from '../../context.js';
import type { RouteDeps } from '../deps.js';

export function healthRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  router.get('/health', deps.guard('health/read'), (ctx) => {
    const caller = callerOf(ctx);
    ctx.body = { status: 'ok', tenant: caller.tenant, partnerId: caller.partnerId, principalId: caller.principalId };
  });
}
