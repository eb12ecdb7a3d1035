// Bearer authentication and the environment-scope check, before any routing: the token must be an
// ES256 access token (typ at+jwt) from our issuer for our audience, unexpired, issued no later than
// now (within the clock skew) for no longer than the issuer's lifetime, and carry this environment's
// access scope; then the client's current state (client-state.ts) applies: a disabled client or a
// revoked token is refused, and the permissions and rate limit are the client's current ones (a
// token's `rate_limit` claim is informative only). Verified tokens are cached until they expire, so a
// partner reusing its token (as it should) pays for the signature check once, and afterwards for a
// prefix check and two lookups. The pipeline (pipeline.ts) runs this for every request but the OpenAPI document.
import { jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { DomainError } from '@partner/shared/domain/errors';
import { remainingMs, type Caller, type GatewayContext } from '../context.js';
import type { KeyStore } from '../jwks.js';
import type { ClientState, ClientStates } from '../client-state.js';
import { authenticateByCookie, type ConsoleAuth } from '../resources/console/cookie-auth.js';

export interface AuthenticateOptions {
  issuer: string;
  audience: string;
  scope: string;
  keys: KeyStore;
  /** The issuer's token lifetime: exp - iat may not exceed it. */
  maxLifetimeS: number;
  /** Each client's current state, applied over its token's claims. */
  clients: ClientStates;
  /** Deadline of a state read from the auth service (cold cache). */
  stateTimeoutMs: number;
  /** Called with the reason whenever a token is refused (metrics). */
  onFailure?: (reason: string) => void;
  /** The partner console's session cookie, accepted on a request without Authorization. */
  console?: ConsoleAuth;
}

const REALM = 'partner-api';
const MAX_TOKEN_LENGTH = 8192;
const CLOCK_TOLERANCE_S = 30;

interface Claims {
  caller: Omit<Caller, 'principalId'>;
  scopes: string[];
  exp: number;
  /** The client's token version when the token was issued (`tv`; 0 for tokens issued without it). */
  tokenVersion: number;
}

interface Verified {
  token: string;
  caller: Omit<Caller, 'principalId'>;
  /** Whether the token carries this environment's access scope. */
  inScope: boolean;
  exp: number;
  tokenVersion: number;
}

/** The signature segment of a compact JWS: the cache key, far shorter to hash than the token. */
const signatureOf = (token: string): string => token.slice(token.lastIndexOf('.') + 1);

function claimsToCaller(p: JWTPayload, maxLifetimeS: number, now = Date.now() / 1000): Claims {
  const { client_id: clientId, tenant, partner_id: partnerId, permissions, scope, exp, iat, tv } = p as Record<string, unknown>;
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
  // jose checks iat only against a maxTokenAge: the lifetime bounds are checked here.
  if (typeof iat !== 'number' || iat > now + CLOCK_TOLERANCE_S) {
    throw new DomainError('invalid_token', 'the token is not valid yet (issued in the future)');
  }
  if (exp - iat > maxLifetimeS) throw new DomainError('invalid_token', "the token's lifetime is longer than the issuer grants");
  if (tv !== undefined && !(typeof tv === 'number' && Number.isSafeInteger(tv) && tv >= 0)) {
    throw new DomainError('invalid_token', 'the token lacks required claims');
  }
  return {
    caller: { clientId, tenant, partnerId, permissions: new Set(permissions as string[]) },
    scopes: scope.split(' '),
    exp,
    tokenVersion: typeof tv === 'number' ? tv : 0,
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

/** Authenticates the request: sets ctx.state.caller, or throws the 401/403 with WWW-Authenticate set. */
export function authenticator(opts: AuthenticateOptions): (ctx: GatewayContext) => Promise<void> {
  // By signature segment; a hit counts only for the very same token, so a token whose header or
  // payload differ from the verified one is never taken from here.
  const cache = new Map<string, Verified>();
  const cacheSize = 10_000;
  const fail = (ctx: GatewayContext, reason: string, err: DomainError): never => {
    opts.onFailure?.(reason);
    if (err.code === 'unauthenticated') ctx.set('WWW-Authenticate', `Bearer realm="${REALM}"`);
    else if (err.code === 'invalid_token') {
      ctx.set('WWW-Authenticate', `Bearer realm="${REALM}", error="invalid_token", error_description="${err.message}"`);
    } else if (err.code === 'insufficient_scope') {
      ctx.set('WWW-Authenticate', `Bearer realm="${REALM}", error="insufficient_scope", scope="${opts.scope}"`);
    }
    throw err;
  };

  const cached = (token: string): Verified | undefined => {
    const hit = cache.get(signatureOf(token));
    return hit && hit.token === token && hit.exp + CLOCK_TOLERANCE_S > Date.now() / 1000 ? hit : undefined;
  };

  const verify = async (token: string): Promise<Verified> => {
    const hit = cached(token);
    if (hit) return hit;
    const { payload } = await jwtVerify(token, opts.keys.getKey, {
      issuer: opts.issuer,
      audience: opts.audience,
      algorithms: ['ES256'],
      typ: 'at+jwt',
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['exp', 'iat', 'sub', 'jti'],
    });
    const { caller, scopes, exp, tokenVersion } = claimsToCaller(payload, opts.maxLifetimeS);
    const v: Verified = { token, caller, inScope: scopes.includes(opts.scope), exp, tokenVersion };
    if (cache.size >= cacheSize) {
      // Drop the oldest entry (Map keeps insertion order).
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    cache.set(signatureOf(token), v);
    return v;
  };

  /** Any Authorization header: parsed in full (any case of "Bearer", extra spaces) and verified. */
  const verifyHeader = async (ctx: GatewayContext, header: string): Promise<Verified> => {
    const m = /^Bearer +([^\s]+) *$/i.exec(header);
    if (!header || !m?.[1]) {
      return fail(ctx, 'missing', new DomainError('unauthenticated', 'send Authorization: Bearer <access token>'));
    }
    const token = m[1];
    if (token.length > MAX_TOKEN_LENGTH) {
      return fail(ctx, 'malformed', new DomainError('invalid_token', 'the token is too long'));
    }
    try {
      return await verify(token);
    } catch (err) {
      if (err instanceof DomainError) {
        if (err.code === 'unavailable') throw err;
        return fail(ctx, err.code === 'invalid_token' ? 'unknown_kid_or_claims' : err.code, err);
      }
      const { reason, message } = reasonOf(err);
      return fail(ctx, reason, new DomainError('invalid_token', message));
    }
  };

  return async (ctx) => {
    const header = ctx.get('authorization');
    if (!header && opts.console && (await authenticateByCookie(ctx, opts.console, opts.clients, opts.stateTimeoutMs))) return;
    // Only a token that matched the full parse is ever cached, so "Bearer " + a cached token is one
    // the full parse would accept as it is.
    const verified = (header.startsWith('Bearer ') && cached(header.slice(7))) || (await verifyHeader(ctx, header));
    if (!verified.inScope) {
      return fail(
        ctx,
        'wrong_scope',
        new DomainError('insufficient_scope', `the token does not carry this environment's scope ${opts.scope}`),
      );
    }
    const { clientId, tenant, partnerId } = verified.caller;
    // The client's current state: from the cache without an await, read from the auth service when cold.
    const state: ClientState = opts.clients.get(clientId) ?? (await opts.clients.load(clientId, Math.min(remainingMs(ctx), opts.stateTimeoutMs)));
    if (state.disabled) return fail(ctx, 'client_disabled', new DomainError('invalid_token', 'the client is disabled'));
    if (verified.tokenVersion < state.tokenVersion) return fail(ctx, 'revoked', new DomainError('invalid_token', 'the token has been revoked'));
    // A fresh caller per request (the guard sets its principal), of one fixed shape: a spread of the
    // cached one would give every request an object of its own hidden class. Permissions and the rate
    // limit are the client's current ones, not its token's.
    ctx.state.caller = { clientId, tenant, partnerId, permissions: state.permissions, rateLimit: state.rateLimit, principalId: null };
  };
}
