// The job service's metrics: jobs accepted and settled by kind, time to settlement, the outbox's
// publishes, and its backlog and oldest row (one query per scrape for both gauges).
import { Counter, Histogram, type Registry } from 'prom-client';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { scrapedGauges } from '@partner/shared/telemetry/gauges';
import type { Pool } from '@partner/shared/db/pg';
import { outboxBacklog } from './repo.js';

export function jobMetrics(registry: Registry, pool: Pool) {
  const accepted = new Counter({ name: 'partner_jobs_accepted_total', help: 'Jobs accepted, by kind.', labelNames: ['kind'], registers: [registry] });
  const settled = new Counter({
    name: 'partner_jobs_settled_total',
    help: 'Jobs settled, by kind and outcome (succeeded/failed/canceled).',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  });
  // Pre-initialised: the accepted-vs-settled panels and alerts see every kind from the first scrape.
  for (const kind of Object.values(JOB_KINDS)) {
    accepted.inc({ kind }, 0);
    for (const outcome of ['succeeded', 'failed', 'canceled']) settled.inc({ kind, outcome }, 0);
  }
  const settleLatency = new Histogram({
    name: 'partner_job_settle_latency_seconds',
    help: 'Time from a job being accepted to its settlement, by kind.',
    labelNames: ['kind'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  const published = new Counter({ name: 'partner_job_outbox_published_total', help: 'Jobs published to JetStream.', registers: [registry] });
  const publishFailures = new Counter({
    name: 'partner_job_outbox_publish_failures_total',
    help: 'Failed attempts to publish outbox rows (retried).',
    registers: [registry],
  });
  // One outbox query per scrape for both gauges; a failed read marks them NaN and is counted.
  scrapedGauges(registry, () => outboxBacklog(pool), [
    { name: 'partner_job_outbox_backlog', help: 'Jobs committed but not yet published to JetStream (NaN when the count failed).', value: (r) => r.n },
    { name: 'partner_job_outbox_oldest_age_seconds', help: 'Age of the oldest job waiting in the outbox (0 when empty; NaN when the read failed).', value: (r) => r.age },
  ]);
  return {
    accepted: (kind: string) => accepted.inc({ kind }),
    settled: (kind: string, outcome: string, seconds: number) => {
      settled.inc({ kind, outcome });
      settleLatency.observe({ kind }, seconds);
    },
    published: (n: number) => published.inc(n),
    publishFailed: () => publishFailures.inc(),
  };
}
