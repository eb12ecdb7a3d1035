// Authentication by the console's session cookie (API.md "Partner console"), for a request to /v1
// that carries no Authorization header: the console's pages call the same /v1 routes as the API,
// and the pipeline resolves the cookie to the minting client's tenant, partner and *current*
// permissions and rate limit, so the guard, the rate limit and the request log apply unchanged.
// Every mutation (any method but GET, HEAD and OPTIONS) must carry the session's CSRF token in
// X-CSRF-Token (403 forbidden otherwise), and a read-only session refuses every mutation (403).
import { timingSafeEqual } from 'node:crypto';
import { DomainError } from '@partner/shared/domain/errors';
import type { GatewayContext } from '../../context.js';
import { remainingMs } from '../../context.js';
import type { ClientStates } from '../../client-state.js';
import type { ConsoleSessions, ConsoleSession } from './sessions.js';

export interface ConsoleAuth {
  cookieName: string;
  sessions: ConsoleSessions;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * The live session the request's cookie names, with its client still enabled and not revoked since
 * the link was minted; undefined when there is none (no cookie, unknown, expired, ended, revoked).
 */
export async function liveSession(ctx: GatewayContext, auth: ConsoleAuth, clients: ClientStates, timeoutMs: number): Promise<ConsoleSession | undefined> {
  const sessionId = ctx.cookies.get(auth.cookieName);
  if (!sessionId) return undefined;
  const budget = Math.min(remainingMs(ctx), timeoutMs);
  const session = await auth.sessions.resolve(sessionId, budget);
  if (!session) return undefined;
  const state = clients.get(session.clientId) ?? (await clients.load(session.clientId, budget));
  if (state.disabled || state.tokenVersion > session.tokenVersion) return undefined;
  return session;
}

/** True when the request carried the console cookie and was authenticated by it (ctx.state.caller set). */
export async function authenticateByCookie(ctx: GatewayContext, auth: ConsoleAuth, clients: ClientStates, timeoutMs: number): Promise<boolean> {
  if (!ctx.cookies.get(auth.cookieName)) return false;
  const session = await liveSession(ctx, auth, clients, timeoutMs);
  if (!session) {
    ctx.set('WWW-Authenticate', 'Bearer realm="partner-api"');
    throw new DomainError('unauthenticated', 'the console session has ended (expired, signed out or revoked): open a new console link');
  }
  if (!SAFE_METHODS.has(ctx.method)) {
    if (!sameText(ctx.get('x-csrf-token'), session.csrfToken)) {
      throw new DomainError('forbidden', 'a mutation from the console must carry the session\'s X-CSRF-Token header');
    }
    if (session.readOnly) throw new DomainError('forbidden', 'this console session is read-only');
  }
  const state = clients.get(session.clientId) ?? (await clients.load(session.clientId, Math.min(remainingMs(ctx), timeoutMs)));
  ctx.state.caller = {
    clientId: session.clientId,
    tenant: session.tenant,
    partnerId: session.partnerId,
    permissions: state.permissions,
    rateLimit: state.rateLimit,
    principalId: null,
  };
  ctx.state.console = { readOnly: session.readOnly };
  return true;
}
