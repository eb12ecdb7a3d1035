// The token server ({auth_url}): POST /oauth2/token (OAuth 2.0 client credentials, RFC 6749 §4.4,
// errors exactly as §5.2), the JWKS and RFC 8414 metadata. Access tokens are RFC 9068-style JWTs.
import Koa from 'koa';
import getRawBody from 'raw-body';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Logger } from '@partner/shared/telemetry/logger';
import type { Pool } from '@partner/shared/db/pg';
import { DomainError } from '@partner/shared/domain/errors';
import { isDependencyOutage, OUTAGE_RETRY_AFTER_S } from '@partner/shared/domain/outage';
import { context, startHttpServerSpan } from '@partner/shared/telemetry/tracing';
import type { AuthConfig } from './config.js';
import { findClient } from './repo.js';
import { secretMatches } from './secrets.js';
import { SIGNING_ALG, loadSigningKey, publicJwks, type SigningKey } from './keys.js';
import { AttemptGuard, refusalDescription } from './attempts.js';

type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope' | 'server_error' | 'temporarily_unavailable';

class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
  }
}

const REALM = 'partner-token';

/** Parses `Authorization: Basic` per RFC 6749 §2.3.1 (id and secret are form-urlencoded first). */
export function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return undefined;
  const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  try {
    return { id: unform(decoded.slice(0, i)), secret: unform(decoded.slice(i + 1)) };
  } catch {
    return undefined;
  }
}

const ROUTES = new Set(['/oauth2/token', '/.well-known/jwks.json', '/.well-known/oauth-authorization-server']);

export interface TokenMetrics {
  issued(): void;
  refused(reason: string): void;
}

export function createTokenApp(opts: { config: AuthConfig; pool: Pool; logger: Logger; metrics?: TokenMetrics }): Koa {
  const { config, pool, logger } = opts;
  // Behind an ingress the client's address is the last X-Forwarded-For hop; never trust it otherwise.
  const app = new Koa({ proxy: config.trustProxy, maxIpsCount: 1 });
  app.on('error', (err: Error & { code?: string }) => logger.debug({ err: err.message, code: err.code }, 'connection error'));
  const attempts = new AttemptGuard(config.attempts);
  let signing: SigningKey | undefined;
  let loading: Promise<SigningKey> | undefined;

  const signingKey = async (activeKid: string | null): Promise<SigningKey> => {
    if (signing && (activeKid === null || signing.kid === activeKid)) return signing;
    loading ??= loadSigningKey(pool, config.keyEncryptionKeys).finally(() => (loading = undefined));
    signing = await loading;
    return signing;
  };

  /** The token request, begun as an attempt of its source (attempts.begin) before anything is checked. */
  const issue = async (ctx: Koa.Context): Promise<void> => {
    let failure: { clientId: string | undefined } | undefined;
    try {
      await issueToken(ctx, (clientId) => (failure = { clientId }));
    } finally {
      const delay = attempts.finish(ctx.ip, failure);
      // A failed client authentication is answered late when its client id has failed often.
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    }
  };

  const issueToken = async (ctx: Koa.Context, failed: (clientId: string | undefined) => void): Promise<void> => {
    if (!ctx.is('application/x-www-form-urlencoded')) {
      throw new OAuthError(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
    }
    let raw: string;
    try {
      raw = await getRawBody(ctx.req, { limit: '16kb', encoding: 'utf8', length: ctx.get('content-length') || undefined });
    } catch {
      throw new OAuthError(400, 'invalid_request', 'the request body could not be read (at most 16 KiB)');
    }
    const form = new URLSearchParams(raw);
    for (const name of new Set(form.keys())) {
      if (form.getAll(name).length > 1) throw new OAuthError(400, 'invalid_request', `parameter ${name} is repeated`);
    }

    const basic = parseBasic(ctx.get('authorization'));
    const refuse = (description: string): never => {
      failed(basic?.id);
      throw new OAuthError(401, 'invalid_client', description);
    };
    if (form.has('client_secret') || (form.has('client_id') && !basic)) {
      return refuse('authenticate the client with HTTP Basic only');
    }
    if (!basic) return refuse('client authentication required (HTTP Basic)');
    if (form.has('client_id') && form.get('client_id') !== basic.id) {
      throw new OAuthError(400, 'invalid_request', 'client_id does not match the authenticated client');
    }
    const client = await findClient(pool, basic.id);
    if (!client || !secretMatches(basic.secret, client.secret_hash) || client.disabled_at) {
      return refuse('client authentication failed');
    }

    const grantType = form.get('grant_type');
    if (!grantType) throw new OAuthError(400, 'invalid_request', 'grant_type is required');
    if (grantType !== 'client_credentials') {
      throw new OAuthError(400, 'unsupported_grant_type', 'only grant_type=client_credentials is supported');
    }
    const scope = form.get('scope')?.trim();
    if (!scope) throw new OAuthError(400, 'invalid_scope', 'scope is required: the access scope of the environment');
    const requested = scope.split(/\s+/);
    if (requested.length !== 1 || !config.scopes.includes(scope)) {
      throw new OAuthError(400, 'invalid_scope', `scope must be exactly one of: ${config.scopes.join(', ')}`);
    }

    const key = await signingKey(client.active_kid);
    const now = Math.floor(Date.now() / 1000);
    const accessToken = await new SignJWT({
      client_id: client.client_id,
      scope,
      tenant: client.tenant_id,
      partner_id: client.partner_id,
      permissions: client.permissions,
      // The client's token version: a gateway refuses the token once `client revoke-tokens` raised it.
      tv: Number(client.token_version),
      ...(client.rate_limit_rps && client.rate_limit_burst
        ? { rate_limit: { rps: Number(client.rate_limit_rps), burst: client.rate_limit_burst } }
        : {}),
    })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'at+jwt' })
      .setIssuer(config.issuer)
      .setSubject(client.client_id)
      .setAudience(config.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + config.tokenTtlSeconds)
      .setJti(randomUUID())
      .sign(key.key);

    opts.metrics?.issued();
    logger.info({ clientId: client.client_id, scope }, 'token issued');
    ctx.body = { access_token: accessToken, token_type: 'Bearer', expires_in: config.tokenTtlSeconds };
  };

  // A server span per request (never continuing a caller's traceparent: the caller is a partner).
  app.use(async (ctx, next) => {
    const server = startHttpServerSpan({ method: ctx.method, headers: ctx.headers }, { trustTraceparent: false });
    try {
      await context.with(server.context, next);
    } finally {
      server.end(ROUTES.has(ctx.path) ? ctx.path : undefined, ctx.status);
    }
  });

  app.use(async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    ctx.set('X-Content-Type-Options', 'nosniff');
    try {
      await next();
    } catch (err) {
      let e: OAuthError;
      if (err instanceof OAuthError) e = err;
      // The database unreachable (a failover, a restart): 503 with Retry-After, the OAuth code for
      // "try again later" (RFC 6749 §4.1.2.1), never a 500; the next request after it is back succeeds.
      else if (isDependencyOutage(err) || (err instanceof DomainError && err.code === 'unavailable')) {
        e = new OAuthError(503, 'temporarily_unavailable', 'the token service cannot reach its database; try again later');
      }
      else {
        logger.error({ err }, 'token endpoint failed');
        e = new OAuthError(500, 'server_error', 'internal error');
      }
      if (e.status === 401) ctx.set('WWW-Authenticate', `Basic realm="${REALM}"`);
      if (e.status === 503) ctx.set('Retry-After', String(OUTAGE_RETRY_AFTER_S));
      opts.metrics?.refused(e.error);
      ctx.status = e.status;
      ctx.body = { error: e.error, error_description: e.description };
    }
  });

  app.use(async (ctx) => {
    if (ctx.path === '/oauth2/token') {
      if (ctx.method !== 'POST') {
        ctx.set('Allow', 'POST');
        throw new OAuthError(405, 'invalid_request', 'use POST');
      }
      const refused = attempts.begin(ctx.ip);
      if (refused) {
        ctx.set('Retry-After', String(refused.retryAfterS));
        throw new OAuthError(429, 'temporarily_unavailable', refusalDescription(refused, config.attempts.windowMs));
      }
      return issue(ctx);
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 404;
      ctx.body = { error: 'not_found' };
      return;
    }
    if (ctx.path === '/.well-known/jwks.json') {
      ctx.set('Cache-Control', 'public, max-age=60');
      ctx.remove('Pragma');
      ctx.body = await publicJwks(pool, config.tokenTtlSeconds);
      return;
    }
    if (ctx.path === '/.well-known/oauth-authorization-server') {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.remove('Pragma');
      ctx.body = {
        issuer: config.issuer,
        token_endpoint: `${config.issuer}/oauth2/token`,
        jwks_uri: `${config.issuer}/.well-known/jwks.json`,
        scopes_supported: config.scopes,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        response_types_supported: [],
      };
      return;
    }
    ctx.status = 404;
    ctx.body = { error: 'not_found' };
  });
  return app;
}
