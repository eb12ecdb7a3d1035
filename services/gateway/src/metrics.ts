// Gateway metrics (Prometheus): RED by route template, errors by code, in-flight requests, token
// failures by reason. Label values are bounded: route templates, never raw paths or ids.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { GatewayContext } from './context.js';

export function gatewayMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'partner_gateway_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'partner_gateway_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'partner_gateway_http_errors_total',
    help: 'Error responses, by error code.',
    labelNames: ['code'],
    registers: [registry],
  });
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
  const rateLimited = new Counter({
    name: 'partner_gateway_rate_limited_total',
    help: 'Requests refused with 429 by the per-client rate limit.',
    registers: [registry],
  });
  return {
    inflight,
    rateLimited: () => rateLimited.inc(),
    waiters: {
      waiting: (d: number) => waiting.inc(d),
      outcome: (outcome: 'settled' | 'timed_out') => waitOutcomes.inc({ outcome }),
    },
    tokenFailure: (reason: string) => tokenFailures.inc({ reason }),
    observe: (ctx: GatewayContext, seconds: number) => {
      const labels = { route: ctx.state.route ?? 'unmatched', method: ctx.method, status: String(ctx.status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
      if (ctx.state.errorCode) errors.inc({ code: ctx.state.errorCode });
    },
  };
}

export type GatewayMetrics = ReturnType<typeof gatewayMetrics>;
