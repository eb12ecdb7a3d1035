// Per-client rate limits: a token bucket per client in this gateway process, applied after
// authentication. Every response carries the IETF RateLimit-Policy / RateLimit headers
// (draft-ietf-httpapi-ratelimit-headers); an exhausted bucket answers 429 rate_limited with
// Retry-After. Limits are per replica: each of N replicas (RATE_LIMIT_REPLICAS) enforces 1/N of the
// client's limit, so the fleet as a whole enforces the configured figure as long as the load
// balancer spreads a client's requests evenly (documented in docs/api.md).
import { DomainError } from '@partner/shared/domain/errors';
import { callerOf, type GatewayContext } from '../context.js';

export interface RateLimit {
  /** Sustained requests per second. */
  rps: number;
  /** Bucket size: requests allowed in a burst. */
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
  limit: RateLimit;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  constructor(private readonly maxClients = 100_000) {}

  /** Takes one token; returns what is left and, when refused, the seconds until one is back. */
  take(clientId: string, limit: RateLimit, now = Date.now()): { allowed: boolean; remaining: number; resetS: number; retryAfterS: number } {
    let b = this.buckets.get(clientId);
    if (!b) {
      if (this.buckets.size >= this.maxClients) this.buckets.delete(this.buckets.keys().next().value as string);
      b = { tokens: limit.burst, at: now, limit };
      this.buckets.set(clientId, b);
    } else {
      // One bucket per client, whatever limit the request names: a new limit changes how fast the
      // bucket refills and how much it holds from now on, never what is left in it (a bucket that
      // started afresh on every change of limit could be reset at will by alternating two tokens).
      b.tokens = Math.min(limit.burst, b.tokens + (Math.max(0, now - b.at) / 1000) * limit.rps);
      b.at = now;
      b.limit = limit;
    }
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    const remaining = Math.floor(b.tokens);
    return {
      allowed,
      remaining,
      resetS: Math.ceil((limit.burst - b.tokens) / limit.rps),
      retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / limit.rps)),
    };
  }
}

/** This replica's share of a configured limit, with its RateLimit-Policy header value. */
interface ReplicaLimit {
  limit: RateLimit;
  policy: string;
}

/** Takes a token for the caller and sets the RateLimit headers, or throws 429 rate_limited with Retry-After. */
export function rateLimiter(opts: {
  defaults: RateLimit;
  replicas: number;
  onReject?: () => void;
}): (ctx: GatewayContext) => void {
  const buckets = new TokenBuckets();
  // Per configured limit (the default, or a client's own from its cached token): computed once.
  const shares = new WeakMap<RateLimit, ReplicaLimit>();
  const shareOf = (configured: RateLimit): ReplicaLimit => {
    let share = shares.get(configured);
    if (!share) {
      const limit = { rps: configured.rps / opts.replicas, burst: Math.max(1, Math.floor(configured.burst / opts.replicas)) };
      const window = Math.max(1, Math.round(limit.burst / limit.rps));
      share = { limit, policy: `"client";q=${limit.burst};w=${window}` };
      shares.set(configured, share);
    }
    return share;
  };
  return (ctx) => {
    const caller = callerOf(ctx);
    // The client's current own limit (set with `admin client limits`; client-state.ts), else the default.
    const configured = caller.rateLimit ?? opts.defaults;
    const { limit, policy } = shareOf(configured);
    const r = buckets.take(caller.clientId, limit);
    ctx.set('RateLimit-Policy', policy);
    ctx.set('RateLimit', `"client";r=${r.remaining};t=${r.resetS}`);
    if (!r.allowed) {
      opts.onReject?.();
      ctx.set('Retry-After', String(r.retryAfterS));
      throw new DomainError('rate_limited', `rate limit of ${configured.rps} requests per second exceeded; retry after ${r.retryAfterS} s`);
    }
  };
}
