// GET /v1/policies and GET /v1/policies/{id} (policies/read), answered by the policy service.
import type Router from '@koa/router';
import type { GatewayState } from '../context.js';
import type { RouteDeps } from './deps.js';

export function policyRoutes(_router: Router<GatewayState>, _deps: RouteDeps): void {
  // Added with the policies issue.
}
