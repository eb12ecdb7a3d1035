// The worker's metrics: concurrency in use and its limit, job deliveries by kind and outcome, and the
// shared durable consumer's state read from JetStream at scrape time (one consumer-info request per
// scrape, shared by the three gauges). Every worker reports the same consumer (aggregate with max,
// not sum); NaN (and partner_metric_source_failures_total counted) when JetStream does not answer
// within a second: never the last value as if it were current.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { NatsConnection } from 'nats';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import type { natsNames } from '@partner/shared/nats/client';
import { scrapedGauges } from '@partner/shared/telemetry/gauges';

export function workerMetrics(registry: Registry, concurrency: number) {
  const inUse = new Gauge({ name: 'partner_worker_concurrency_in_use', help: 'Jobs being processed by this worker.', registers: [registry] });
  new Gauge({
    name: 'partner_worker_concurrency_limit',
    help: 'Jobs this worker processes at once at most.',
    registers: [registry],
  }).set(concurrency);
  const processed = new Counter({
    name: 'partner_worker_jobs_processed_total',
    help: 'Job deliveries handled, by kind and outcome (succeeded, failed, retried, skipped: settled or cancelled before the claim, held: sandbox:hold).',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  });
  for (const kind of Object.values(JOB_KINDS)) for (const outcome of ['succeeded', 'failed', 'retried', 'skipped', 'held']) processed.inc({ kind, outcome }, 0);
  return {
    inUse: (d: number) => inUse.inc(d),
    processed: (kind: string, outcome: string) => processed.inc({ kind, outcome }),
  };
}

export function consumerGauges(registry: Registry, nc: NatsConnection, names: ReturnType<typeof natsNames>): void {
  scrapedGauges(
    registry,
    async () => {
      if (nc.isClosed()) return undefined;
      const jsm = await nc.jetstreamManager({ timeout: 1_000, checkAPI: false });
      return jsm.consumers.info(names.jobsStream, names.workerConsumer);
    },
    [
      { name: 'partner_worker_consumer_pending', help: 'Jobs in JetStream not yet delivered to any worker (the shared consumer).', value: (i) => i.num_pending },
      { name: 'partner_worker_consumer_ack_pending', help: 'Jobs delivered to a worker and not yet acknowledged.', value: (i) => i.num_ack_pending },
      { name: 'partner_worker_consumer_redelivered', help: 'Jobs delivered more than once and not yet acknowledged.', value: (i) => i.num_redelivered },
    ],
  );
}
