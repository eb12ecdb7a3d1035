// The partner console's own routes under /console, answered before authentication (a public route
// of the pipeline; the /v1 API the pages call is authenticated by the session cookie instead,
// cookie-auth.ts). What they serve:
// - GET /console/open?token=… exchanges a single-use link for a session (ExchangeConsoleLink), sets
//   the session cookie (HttpOnly, SameSite=Strict, Path=/, Secure outside local mode) and redirects
//   (Refresh: 0, and a meta refresh) to /console/overview, a URL without the token; a used, expired, forged or revoked link gets a plain
//   page saying so and how to get a new one, and no session.
// - GET /console/ and /console/{page}: the console's one HTML shell (its ES modules render the page
//   from the path), for a live session; without one, the plain "session ended" page.
// - GET /console/session: who the session is (tenant, partner, readOnly) and its CSRF token, for
//   the shell's code. The session id itself is never readable by script (HttpOnly).
// - POST /console/logout: ends the session (with the CSRF token), clears the cookie.
// - GET /console/assets/{file}: the static files of services/gateway/console/ (no CDN, no build step).
// Every answer carries a strict Content-Security-Policy without 'unsafe-inline' and frame-ancestors
// 'none'; nothing here is cached by the browser but the assets (revalidated by ETag).
import { createHash, timingSafeEqual } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DomainError } from '@partner/shared/domain/errors';
import type { GatewayContext, PublicRoute } from '../../context.js';
import type { RouteDeps } from '../deps.js';
import { liveSession } from './cookie-auth.js';

export const CONSOLE_DIR = fileURLToPath(new URL('../../../console/', import.meta.url));

export const CONSOLE_PAGES = ['overview', 'requests', 'jobs', 'submissions', 'quotes', 'policies', 'events', 'webhooks'] as const;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The console's files, read once at start (a few dozen KiB). */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(join(dir, name));
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}

/** Where an opened link lands: a URL without the token. */
export const CONSOLE_HOME = '/console/overview';

/** The answer to an opened link: straight on to the console (meta refresh; CSP allows no inline script). */
function openedPage(): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="0; url=${CONSOLE_HOME}">
<title>Opening the partner console</title><link rel="stylesheet" href="/console/assets/console.css"></head>
<body class="plain"><main id="main">
<h1>Opening the partner console…</h1>
<p><a href="${CONSOLE_HOME}">Continue to the console</a>.</p>
</main></body></html>
`;
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The plain page of a link or session that cannot be used: what happened, and how to get a new link. */
export function plainPage(title: string, message: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Partner console</title><link rel="stylesheet" href="/console/assets/console.css"></head>
<body class="plain"><main id="main">
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p>
<p>To open the console, get a new link: your integration's server mints one with
<code>POST /v1/console/sessions</code> (permission <code>requests/read</code>), or run
<code>partner console</code> (add <code>--read-only</code> for a session that changes nothing). A link works once, within 10 minutes.</p>
</main></body></html>
`;
}

const LINK_OUTCOMES: Record<string, { status: number; title: string; message: string }> = {
  used: { status: 410, title: 'This console link has already been used', message: 'A console link opens the console once; this one was opened before.' },
  expired: { status: 410, title: 'This console link has expired', message: 'A console link is valid for 10 minutes after it was minted.' },
  unknown: { status: 404, title: 'This console link is not valid', message: 'The link is not one the service issued (it may have been cut short when copied).' },
  revoked: { status: 403, title: 'This console link has been revoked', message: "The access of the client that minted it has been revoked or disabled since." },
};

export const SESSION_ENDED = {
  title: 'Your console session has ended',
  message: 'The session expired, was signed out, or the access of the client that opened it was revoked.',
};

const securityHeaders = (ctx: GatewayContext): void => {
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  ctx.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=()');
};

const html = (ctx: GatewayContext, status: number, body: string): void => {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
};

export function consoleRoute(deps: RouteDeps): PublicRoute {
  const { config, clients } = deps;
  const consoleDeps = deps.console;
  const assets = loadAssets(CONSOLE_DIR);
  const shell = assets.get('index.html');
  if (!shell || !consoleDeps) throw new Error(`the console's files are missing in ${CONSOLE_DIR}`);
  const { auth, clientStates } = consoleDeps;
  const timeoutMs = config.grpcTimeoutMs;
  const secure = config.console.cookieSecure;

  const setCookie = (ctx: GatewayContext, value: string, expires: Date): void => {
    ctx.cookies.set(auth.cookieName, value, { httpOnly: true, sameSite: 'strict', secure, path: '/', expires, overwrite: true });
  };
  // Koa refuses to set a secure cookie over plain HTTP unless told the connection is secure: behind
  // the ingress (TLS terminated there, app.proxy) it is; a local test over http sets secure=false.
  const cookieCtx = (ctx: GatewayContext): GatewayContext => {
    if (secure) (ctx.cookies as unknown as { secure: boolean }).secure = true;
    return ctx;
  };

  const answer = async (ctx: GatewayContext, path: string): Promise<void> => {
    securityHeaders(ctx);
    const method = ctx.method;
    if (path.startsWith('/console/assets/')) {
      ctx.state.route = '/console/assets/:file';
      const asset = assets.get(path.slice('/console/assets/'.length));
      if (!asset || (method !== 'GET' && method !== 'HEAD')) return html(ctx, 404, plainPage('Not found', 'There is no such file in the console.'));
      ctx.set('Cache-Control', 'no-cache');
      ctx.set('ETag', asset.etag);
      if (ctx.get('If-None-Match') === asset.etag) {
        ctx.status = 304;
        return;
      }
      ctx.status = 200;
      ctx.type = asset.type;
      ctx.body = asset.body;
      return;
    }
    if (path === '/console/open') {
      ctx.state.route = '/console/open';
      // Only GET opens a link: a HEAD (a link checker, an unfurler) must not use it up.
      if (method !== 'GET') {
        ctx.set('Allow', 'GET');
        throw new DomainError('method_not_allowed', `${method} is not allowed here; see the Allow header`);
      }
      const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
      const r = await clients.auth.ExchangeConsoleLink({ token }, { timeoutMs });
      if (r.outcome !== 'ok') {
        const o = LINK_OUTCOMES[r.outcome] ?? LINK_OUTCOMES.unknown!;
        return html(ctx, o.status, plainPage(o.title, o.message));
      }
      setCookie(cookieCtx(ctx), r.sessionId, new Date(r.expiresAt));
      // On to a URL without the token at once (Refresh, and the page's own meta refresh), answered 200
      // rather than with a 3xx so that the page is there should a client not follow either.
      ctx.set('Refresh', `0; url=${CONSOLE_HOME}`);
      return html(ctx, 200, openedPage());
    }
    if (path === '/console/logout') {
      ctx.state.route = '/console/logout';
      if (method !== 'POST') {
        ctx.set('Allow', 'POST');
        return html(ctx, 405, plainPage('Method not allowed', 'Sign out with the console\'s Sign out button.'));
      }
      const session = await liveSession(ctx, auth, clientStates, timeoutMs);
      const csrf = Buffer.from(ctx.get('x-csrf-token'));
      if (session && (csrf.length !== Buffer.byteLength(session.csrfToken) || !timingSafeEqual(csrf, Buffer.from(session.csrfToken)))) {
        return html(ctx, 403, plainPage('Forbidden', 'Sign out with the console\'s Sign out button.'));
      }
      const sessionId = ctx.cookies.get(auth.cookieName);
      if (sessionId) await auth.sessions.end(sessionId, timeoutMs);
      setCookie(cookieCtx(ctx), '', new Date(0));
      ctx.status = 204;
      return;
    }
    const session = await liveSession(ctx, auth, clientStates, timeoutMs);
    if (path === '/console/session') {
      ctx.state.route = '/console/session';
      if (!session) {
        ctx.status = 401;
        ctx.body = { error: { code: 'unauthenticated', message: SESSION_ENDED.message, retryable: false } };
        return;
      }
      ctx.body = {
        tenant: session.tenant,
        partnerId: session.partnerId,
        clientId: session.clientId,
        readOnly: session.readOnly,
        expiresAt: session.expiresAt.toISOString(),
        environment: config.environment,
        csrfToken: session.csrfToken,
      };
      return;
    }
    const page = path === '/console' || path === '/console/' ? 'overview' : path.slice('/console/'.length);
    ctx.state.route = '/console/:page';
    if (!(CONSOLE_PAGES as readonly string[]).includes(page) || (method !== 'GET' && method !== 'HEAD')) {
      return html(ctx, 404, plainPage('Not found', 'There is no such page in the console.'));
    }
    if (!session) {
      if (ctx.cookies.get(auth.cookieName)) setCookie(cookieCtx(ctx), '', new Date(0));
      return html(ctx, 401, plainPage(SESSION_ENDED.title, SESSION_ENDED.message));
    }
    ctx.status = 200;
    ctx.type = shell.type;
    ctx.body = shell.body;
  };

  return (ctx) => {
    const path = ctx.path;
    if (path !== '/console' && !path.startsWith('/console/')) return undefined;
    return answer(ctx, path);
  };
}
