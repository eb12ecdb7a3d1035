// POST /v1/console/sessions (API.md "Partner console"): mints a single-use console link for the
// calling client, answered at once (201, not a job: it changes nothing of the partner's). A console
// session cannot mint another (a link needs the client's own credentials, on its server).
import type Router from '@koa/router';
import { DomainError } from '@partner/shared/domain/errors';
import type { GatewayState } from '../../context.js';
import { callerOf, grpcOptions } from '../../context.js';
import { readJson } from '../../http/body.js';
import type { RouteDeps } from '../deps.js';

const BODY_LIMIT = 1024;

function readOnlyOf(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new DomainError('validation_error', 'the body must be a JSON object', { details: [{ field: '', issue: 'must be an object' }] });
  }
  const details = Object.keys(body)
    .filter((k) => k !== 'readOnly')
    .map((field) => ({ field, issue: 'unknown field' }));
  const readOnly = (body as { readOnly?: unknown }).readOnly;
  if (readOnly !== undefined && typeof readOnly !== 'boolean') details.push({ field: 'readOnly', issue: 'must be a boolean' });
  if (details.length > 0) throw new DomainError('validation_error', 'the request body is invalid; see details', { details });
  return readOnly === true;
}

export function consoleRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  router.post('/console/sessions', deps.guard('requests/read'), async (ctx) => {
    if (ctx.state.console) throw new DomainError('forbidden', 'a console session cannot mint console links; mint one with the client\'s credentials');
    const empty = ctx.get('content-length') === '0' || (!ctx.get('content-length') && !ctx.get('transfer-encoding'));
    const readOnly = empty ? false : readOnlyOf(await readJson(ctx, BODY_LIMIT));
    const caller = callerOf(ctx);
    const link = await deps.clients.auth.CreateConsoleLink({ clientId: caller.clientId, readOnly }, grpcOptions(ctx, deps.config.grpcTimeoutMs));
    ctx.status = 201;
    ctx.body = { url: `${deps.config.baseUrl}/console/open?token=${link.token}`, expiresAt: link.expiresAt, readOnly };
  });
}
