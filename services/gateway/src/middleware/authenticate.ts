// Bearer authentication and the environment-scope check, before any routing: the token must be an
// ES256 access token (typ at+jwt) from our issuer for our audience, unexpired, and carry this
// environment's access scope. Verified tokens are cached until they expire, so a partner reusing its
// token (as it should) pays for the signature check once.
import { jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { DomainError } from '@partner/shared/errors';
import type { Caller, GatewayMiddleware } from '../context.js';
import type { KeyStore } from '../jwks.js';

export interface AuthenticateOptions {
  issuer: string;
  audience: string;
  scope: string;
  keys: KeyStore;
  /** Called with the reason whenever a token is refused (metrics). */
  onFailure?: (reason: string) => void;
}

const REALM = 'partner-api';
const MAX_TOKEN_LENGTH = 8192;
const CLOCK_TOLERANCE_S = 30;

interface Verified {
  caller: Omit<Caller, 'principalId'>;
  scopes: string[];
  exp: number;
}

function claimsToCaller(p: JWTPayload): Verified {
  const { client_id: clientId, tenant, partner_id: partnerId, permissions, scope, exp, rate_limit: rl } = p as Record<string, unknown>;
  if (
    typeof clientId !== 'string' ||
    typeof tenant !== 'string' ||
    typeof partnerId !== 'string' ||
    typeof scope !== 'string' ||
    typeof exp !== 'number' ||
    !Array.isArray(permissions) ||
    !permissions.every((x) => typeof x === 'string') ||
    p.sub !== clientId
  ) {
    throw new DomainError('invalid_token', 'the token lacks required claims');
  }
  const limit = rl as { rps?: unknown; burst?: unknown } | undefined;
  const rateLimit =
    limit && typeof limit.rps === 'number' && typeof limit.burst === 'number' && limit.rps > 0 && limit.burst >= 1
      ? { rps: limit.rps, burst: limit.burst }
      : undefined;
  return {
    caller: { clientId, tenant, partnerId, permissions: new Set(permissions as string[]), ...(rateLimit ? { rateLimit } : {}) },
    scopes: scope.split(' '),
    exp,
  };
}

function reasonOf(err: unknown): { reason: string; message: string } {
  if (err instanceof joseErrors.JWTExpired) return { reason: 'expired', message: 'the token has expired' };
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf' || err.claim === 'iat') return { reason: 'not_yet_valid', message: 'the token is not valid yet' };
    return { reason: `bad_${err.claim}`, message: `the token's ${err.claim} claim is not accepted here` };
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return { reason: 'alg_not_allowed', message: 'the token algorithm is not accepted' };
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return { reason: 'bad_signature', message: 'the token signature is invalid' };
  return { reason: 'malformed', message: 'the token is malformed' };
}

export function authenticate(opts: AuthenticateOptions): GatewayMiddleware {
  const cache = new Map<string, Verified>();
  const cacheSize = 10_000;
  const fail = (ctx: Parameters<GatewayMiddleware>[0], reason: string, err: DomainError): never => {
    opts.onFailure?.(reason);
    if (err.code === 'unauthenticated') ctx.set('WWW-Authenticate', `Bearer realm="${REALM}"`);
    else if (err.code === 'invalid_token') {
      ctx.set('WWW-Authenticate', `Bearer realm="${REALM}", error="invalid_token", error_description="${err.message}"`);
    } else if (err.code === 'insufficient_scope') {
      ctx.set('WWW-Authenticate', `Bearer realm="${REALM}", error="insufficient_scope", scope="${opts.scope}"`);
    }
    throw err;
  };

  const verify = async (token: string): Promise<Verified> => {
    const hit = cache.get(token);
    const now = Date.now() / 1000;
    if (hit && hit.exp + CLOCK_TOLERANCE_S > now) return hit;
    const { payload } = await jwtVerify(token, opts.keys.getKey, {
      issuer: opts.issuer,
      audience: opts.audience,
      algorithms: ['ES256'],
      typ: 'at+jwt',
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['exp', 'iat', 'sub', 'jti'],
    });
    const v = claimsToCaller(payload);
    if (cache.size >= cacheSize) {
      // Drop the oldest entry (Map keeps insertion order).
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    cache.set(token, v);
    return v;
  };

  return async (ctx, next) => {
    const header = ctx.get('authorization');
    const m = /^Bearer +([^\s]+) *$/i.exec(header);
    if (!header || !m?.[1]) {
      return fail(ctx, 'missing', new DomainError('unauthenticated', 'send Authorization: Bearer <access token>'));
    }
    const token = m[1];
    if (token.length > MAX_TOKEN_LENGTH) {
      return fail(ctx, 'malformed', new DomainError('invalid_token', 'the token is too long'));
    }
    let verified: Verified;
    try {
      verified = await verify(token);
    } catch (err) {
      if (err instanceof DomainError) {
        if (err.code === 'unavailable') throw err;
        return fail(ctx, err.code === 'invalid_token' ? 'unknown_kid_or_claims' : err.code, err);
      }
      const { reason, message } = reasonOf(err);
      return fail(ctx, reason, new DomainError('invalid_token', message));
    }
    if (!verified.scopes.includes(opts.scope)) {
      return fail(
        ctx,
        'wrong_scope',
        new DomainError('insufficient_scope', `the token does not carry this environment's scope ${opts.scope}`),
      );
    }
    ctx.state.caller = { ...verified.caller, principalId: null };
    await next();
  };
}
