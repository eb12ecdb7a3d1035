// Per-client rate limits: a token bucket per client in this gateway process, applied after
// authentication. Every response carries the IETF RateLimit-Policy / RateLimit headers
// (draft-ietf-httpapi-ratelimit-headers); an exhausted bucket answers 429 rate_limited with
// Retry-After. Limits are per replica: each of N replicas (RATE_LIMIT_REPLICAS) enforces 1/N of the
// client's limit, so the fleet as a whole enforces the configured figure as long as the load
// balancer spreads a client's requests evenly (documented in docs/api.md).
//
// Request count is not cost: a JSON body counts as one request per JSON_COST_UNIT bytes begun (a
// 1 MiB validate is 16), charged from Content-Length before the body is read, or by readJson once a
// body sent without one has been read (chargeJsonBody). So a partner's large bodies take at most its
// rate's worth of the gateway's time, and another partner's latency stays its own (issue 48, 3: a
// flood of 1 MB validates within the request rate took another partner's p50 from 1.7 to 48 ms).
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

  /**
   * Takes `cost` tokens (at most the burst, so every request can pass once the bucket is full);
   * returns what is left and, when refused, the seconds until enough are back.
   */
  take(clientId: string, limit: RateLimit, now = Date.now(), cost = 1): { allowed: boolean; remaining: number; resetS: number; retryAfterS: number } {
    const need = Math.max(1, Math.min(cost, limit.burst));
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
    const allowed = b.tokens >= need;
    if (allowed) b.tokens -= need;
    const remaining = Math.floor(b.tokens);
    return {
      allowed,
      remaining,
      resetS: Math.ceil((limit.burst - b.tokens) / limit.rps),
      retryAfterS: allowed ? 0 : Math.max(1, Math.ceil((need - b.tokens) / limit.rps)),
    };
  }
}

/** Bytes of JSON body that count as one request. */
export const JSON_COST_UNIT = 64 * 1024;
/** What a JSON body of `bytes` counts as, the request itself included (1 up to 64 KiB, 16 for 1 MiB). */
export const jsonBodyCost = (bytes: number): number => 1 + Math.floor(Math.max(0, bytes - 1) / JSON_COST_UNIT);

const CHARGE = Symbol('charge a JSON body read without Content-Length');
type WithCharge = { [CHARGE]?: (bytes: number) => void };
/**
 * readJson's call once it has read a JSON body that came without Content-Length: the rest of its cost
 * is taken now (429 rate_limited when the bucket cannot pay it). A no-op for other bodies.
 */
export function chargeJsonBody(ctx: GatewayContext, bytes: number): void {
  (ctx as unknown as WithCharge)[CHARGE]?.(bytes);
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
  const charge = (ctx: GatewayContext, cost: number): void => {
    const caller = callerOf(ctx);
    // The client's current own limit (set with `admin client limits`; client-state.ts), else the default.
    const configured = caller.rateLimit ?? opts.defaults;
    const { limit, policy } = shareOf(configured);
    const r = buckets.take(caller.clientId, limit, Date.now(), cost);
    ctx.set('RateLimit-Policy', policy);
    ctx.set('RateLimit', `"client";r=${r.remaining};t=${r.resetS}`);
    if (!r.allowed) {
      opts.onReject?.();
      ctx.set('Retry-After', String(r.retryAfterS));
      const counted = cost > 1 ? ` (a JSON body counts as one request per ${JSON_COST_UNIT / 1024} KiB begun: this one as ${Math.min(cost, limit.burst)})` : '';
      throw new DomainError('rate_limited', `rate limit of ${configured.rps} requests per second exceeded${counted}; retry after ${r.retryAfterS} s`);
    }
  };
  return (ctx) => {
    const json = ctx.request.length !== undefined || ctx.get('transfer-encoding') ? ctx.is('application/json') : false;
    const declared = json ? ctx.request.length : undefined;
    charge(ctx, declared !== undefined ? jsonBodyCost(declared) : 1);
    // A JSON body without Content-Length pays the rest when readJson has read it.
    if (json && declared === undefined) (ctx as unknown as WithCharge)[CHARGE] = (bytes) => {
        const rest = jsonBodyCost(bytes) - 1;
        if (rest > 0) charge(ctx, rest);
      };
  };
}
