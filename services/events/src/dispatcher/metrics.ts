// The webhook dispatcher's metrics: attempts by outcome and their duration, deliveries that reached a
// final state, endpoints the system disabled, looks for due deliveries, deliveries held, and the
// backlog read from PostgreSQL at scrape time (one shared query; NaN when the database does not
// answer).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Pool } from '@partner/shared/db/pg';
import { scrapedGauges } from '@partner/shared/telemetry/gauges';
import { batchSizeHistogram } from '@partner/shared/db/batcher';
import type { DispatchMetrics } from './dispatcher.js';
import { backlog } from './store.js';

const OUTCOMES = ['success', 'http_error', 'timeout', 'network_error', 'refused'] as const;
/** Partners named in the per-partner backlog gauge; the rest are summed as "other". */
const TOP_PARTNERS = 10;
/** The step name of the dispatcher's batched settlements in partner_db_batch_size. */
const SETTLE_STEP = 'SettleDeliveries';

export function dispatcherMetrics(registry: Registry, pool: Pool): DispatchMetrics {
  const attempts = new Counter({
    name: 'partner_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (success, http_error, timeout, network_error, refused).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of OUTCOMES) attempts.inc({ outcome }, 0);
  const deliveries = new Counter({
    name: 'partner_webhook_deliveries_total',
    help: 'Webhook deliveries that reached a final state, by status (succeeded, failed).',
    labelNames: ['status'],
    registers: [registry],
  });
  for (const status of ['succeeded', 'failed']) deliveries.inc({ status }, 0);
  const duration = new Histogram({
    name: 'partner_webhook_attempt_duration_seconds',
    help: 'How long a webhook attempt took, from connecting to the end of the answer (or the failure).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const disabled = new Counter({
    name: 'partner_webhook_endpoints_disabled_total',
    help: 'Webhook endpoints disabled by the system, by reason (gone: a 410; failing: no success for the configured time).',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ['gone', 'failing']) disabled.inc({ reason }, 0);
  const looks = new Counter({
    name: 'partner_webhook_dispatcher_looks_total',
    help: 'Looks for due webhook deliveries (claim queries): wake-ups, due times and full claims; idle, it stays flat.',
    registers: [registry],
  });
  // Successes settled together (one transaction each batch): the shared histogram, step SettleDeliveries.
  const batches = batchSizeHistogram(registry);
  batches.zero({ step: SETTLE_STEP });
  const inFlight = new Gauge({ name: 'partner_webhook_in_flight', help: 'Deliveries this dispatcher holds (sending or queued behind an endpoint\'s sends).', registers: [registry] });

  const pending = scrapedGauges(registry, () => backlog(pool), [
    { name: 'partner_webhook_pending_deliveries', help: 'Webhook deliveries not yet succeeded or failed (all dispatchers; aggregate with max).', value: (b) => b.pending },
    { name: 'partner_webhook_oldest_pending_age_seconds', help: 'How late the most overdue pending delivery is (due and not claimed); 0 when none is late.', value: (b) => b.oldestDueAgeS },
  ]);
  new Gauge({
    name: 'partner_webhook_partner_pending_deliveries',
    help: `Pending webhook deliveries of the ${TOP_PARTNERS} partners with the most; the rest summed as partner="other".`,
    labelNames: ['partner'],
    registers: [registry],
    async collect() {
      const b = await pending();
      this.reset();
      if (!b) return this.set({ partner: 'other' }, Number.NaN);
      const top = b.byPartner.slice(0, TOP_PARTNERS);
      for (const p of top) this.set({ partner: p.partner }, p.n);
      this.set({ partner: 'other' }, b.pending - top.reduce((n, p) => n + p.n, 0));
    },
  });

  return {
    attempt: (r) => {
      attempts.inc({ outcome: r.outcome });
      duration.observe(r.durationMs / 1000);
    },
    settled: (s) => {
      if (s.kind === 'succeeded') deliveries.inc({ status: 'succeeded' });
      else if (s.kind === 'failed' || s.kind === 'disabled') deliveries.inc({ status: 'failed' });
      if (s.kind === 'disabled') disabled.inc({ reason: s.reason });
    },
    inFlight: (n) => inFlight.set(n),
    looked: () => looks.inc(),
    settleBatch: (n) => batches.observe({ step: SETTLE_STEP }, n),
  };
}
