// Attachments under /v1/submissions/{id}/attachments: reads (submissions/read) and mutations
// (submissions/write, run as jobs).
import type Router from '@koa/router';
import type { GatewayState } from '../context.js';
import type { RouteDeps } from './deps.js';

export function attachmentRoutes(_router: Router<GatewayState>, _deps: RouteDeps): void {
  // Added with the attachments issue.
}
