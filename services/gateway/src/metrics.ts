// Gateway metrics (Prometheus): RED by route template, errors by code, in-flight requests, token
// failures by reason. Label values are bounded: route templates, never raw paths or ids.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { ERROR_CODES, isKnownCode } from '@partner/shared/domain/errors';
import type { GatewayContext } from './context.js';

/**
 * The `code` label's values: the documented codes plus `other`. A job may fail with any code (a
 * sandbox directive can name one), and an unbounded label would mint a new series per value.
 */
export const codeLabel = (code: string): string => (isKnownCode(code) ? code : 'other');

/** Label values panels and alerts read, created at 0 so rate() and absent() see them from the start. */
const ERROR_CODE_LABELS = [...Object.keys(ERROR_CODES), 'other'];

export function gatewayMetrics(registry: Registry, opts: { maxWaiters?: number; maxWaitersPerPartner?: number } = {}) {
  const requests = new Counter({
    name: 'partner_gateway_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'partner_gateway_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route template, method, status and whether it asked to wait (Prefer: wait).',
    labelNames: ['route', 'method', 'status', 'prefer_wait'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'partner_gateway_http_errors_total',
    help: 'Error responses, by error code (the documented codes, `other` for any other).',
    labelNames: ['code'],
    registers: [registry],
  });
  for (const code of ERROR_CODE_LABELS) errors.inc({ code }, 0);
  const inflight = new Gauge({
    name: 'partner_gateway_http_requests_in_flight',
    help: 'HTTP requests being handled.',
    registers: [registry],
  });
  const tokenFailures = new Counter({
    name: 'partner_gateway_token_verification_failures_total',
    help: 'Bearer tokens refused, by reason.',
    labelNames: ['reason'],
    registers: [registry],
  });
  const waiting = new Gauge({
    name: 'partner_gateway_waiting_requests',
    help: 'Requests held open waiting for a job to settle (Prefer: wait).',
    registers: [registry],
  });
  const waitOutcomes = new Counter({
    name: 'partner_gateway_wait_outcomes_total',
    help: 'Waits that ended, by outcome: settled (woken by the settlement event) or timed_out.',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ['settled', 'timed_out']) waitOutcomes.inc({ outcome }, 0);
  const waitRejected = new Counter({
    name: 'partner_gateway_wait_rejected_total',
    help: 'Prefer: wait requests answered at once because this process already held MAX_WAITERS waits.',
    registers: [registry],
  });
  new Gauge({
    name: 'partner_gateway_max_waiters',
    help: 'Waits this process holds at most (MAX_WAITERS).',
    registers: [registry],
  }).set(opts.maxWaiters ?? 0);
  const waitHolderCapped = new Counter({
    name: 'partner_gateway_wait_partner_cap_rejected_total',
    help: 'Prefer: wait requests answered 429 because their partner already held MAX_WAITERS_PER_PARTNER waits in this process.',
    registers: [registry],
  });
  const partnersAtWaitCap = new Gauge({
    name: 'partner_gateway_partners_at_wait_cap',
    help: 'Partners holding MAX_WAITERS_PER_PARTNER waits in this process now (the gateway logs which at warn).',
    registers: [registry],
  });
  new Gauge({
    name: 'partner_gateway_max_waiters_per_partner',
    help: 'Waits one partner may hold in this process (MAX_WAITERS_PER_PARTNER).',
    registers: [registry],
  }).set(opts.maxWaitersPerPartner ?? 0);
  const feedWakeups = new Counter({
    name: 'partner_gateway_feed_wakeups_total',
    help: 'Waiting feed readers (GET /v1/events under Prefer: wait) woken by a wake-up, by how they were answered: from_wakeup (its events were the page: no call to the events service) or reread (ListEvents read again).',
    labelNames: ['answered'],
    registers: [registry],
  });
  for (const answered of ['from_wakeup', 'reread']) feedWakeups.inc({ answered }, 0);
  const rateLimited = new Counter({
    name: 'partner_gateway_rate_limited_total',
    help: 'Requests refused with 429 by the per-client rate limit.',
    registers: [registry],
  });
  const settledLookups = new Counter({
    name: 'partner_gateway_settled_job_lookups_total',
    help: 'Job reads (GET /v1/jobs/{id}, a cancel, a wait\'s re-read) looked up in the settled jobs this gateway keeps in memory: hit (no call to the job service) or miss (read through it).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ['hit', 'miss']) settledLookups.inc({ outcome }, 0);
  const settledHeld = new Gauge({
    name: 'partner_gateway_settled_jobs_held',
    help: 'Settled jobs this gateway keeps in memory now (at most SETTLED_JOBS_CACHE_MAX).',
    registers: [registry],
  });
  const knownLookups = new Counter({
    name: 'partner_gateway_known_resource_lookups_total',
    help: 'Ownership checks of a submission or a quote (before a quote, withdraw, upload, bind or quote list), by whether this gateway already knew it as the caller\'s (hit) or asked the service that owns it (miss).',
    labelNames: ['resource', 'outcome'],
    registers: [registry],
  });
  for (const resource of ['submission', 'quote']) for (const outcome of ['hit', 'miss']) knownLookups.inc({ resource, outcome }, 0);
  const knownHeld = new Gauge({
    name: 'partner_gateway_known_resources_held',
    help: 'Submissions and quotes this gateway remembers as their partner\'s now (at most KNOWN_RESOURCES_CACHE_MAX).',
    registers: [registry],
  });
  // prom-client hashes a label set on every inc and observe (1.3 µs a request, against 0.5 µs through
  // children kept; a read from memory costs the gateway 55 µs): each (route, method, status,
  // prefer_wait) answered keeps its two children here, no more sets than the two metrics hold for
  // good anyway (routes are templates; nothing here resets them).
  const children = new Map<string, { requests: ReturnType<typeof requests.labels>; duration: ReturnType<typeof duration.labels> }>();
  return {
    inflight,
    settledJobs: {
      lookup: (outcome: 'hit' | 'miss') => settledLookups.inc({ outcome }),
      size: (d: number) => settledHeld.inc(d),
    },
    knownResources: {
      lookup: (resource: string, outcome: 'hit' | 'miss') => knownLookups.inc({ resource, outcome }),
      size: (d: number) => knownHeld.inc(d),
    },
    rateLimited: () => rateLimited.inc(),
    waiters: {
      waiting: (d: number) => waiting.inc(d),
      outcome: (outcome: 'settled' | 'timed_out') => waitOutcomes.inc({ outcome }),
      rejected: () => waitRejected.inc(),
      holderCapped: () => waitHolderCapped.inc(),
      holdersAtCap: (d: number) => partnersAtWaitCap.inc(d),
      feedAnswered: (answered: 'from_wakeup' | 'reread') => feedWakeups.inc({ answered }),
    },
    tokenFailure: (reason: string) => tokenFailures.inc({ reason }),
    observe: (ctx: GatewayContext, seconds: number) => {
      const route = ctx.state.route ?? 'unmatched';
      const status = String(ctx.status);
      // Latency alerts leave out requests that asked to wait: their time is the job's, not the API's.
      const preferWait = /(?:^|[,;\s])wait\s*=/i.test(ctx.get?.('prefer') ?? '') ? 'true' : 'false';
      const key = `${route} ${ctx.method} ${status} ${preferWait}`;
      let c = children.get(key);
      if (!c) {
        const labels = { route, method: ctx.method, status };
        c = { requests: requests.labels(labels), duration: duration.labels({ ...labels, prefer_wait: preferWait }) };
        children.set(key, c);
      }
      c.requests.inc();
      c.duration.observe(seconds);
      if (ctx.state.errorCode) errors.inc({ code: codeLabel(ctx.state.errorCode) });
    },
  };
}

export type GatewayMetrics = ReturnType<typeof gatewayMetrics>;
