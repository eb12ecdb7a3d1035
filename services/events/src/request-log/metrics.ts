// The request-log writer's metrics: entries stored and dropped, batch sizes, the writer's lag (from
// the gateway's answer to the commit of the entry, and the batches waiting in the stream, read at
// scrape time), and the partition job's health (its last success, its failures, the partitions there are).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { scrapedGauge, scrapeSource } from '@partner/shared/telemetry/gauges';

export type WriterDropReason = 'store_unavailable' | 'malformed';

export function requestLogWriterMetrics(registry: Registry, opts: { pendingBatches?: () => Promise<number | undefined> } = {}) {
  const stored = new Counter({ name: 'partner_request_log_stored_total', help: 'Request-log entries stored by the writer.', registers: [registry] });
  const dropped = new Counter({
    name: 'partner_request_log_dropped_total',
    help: 'Request-log entries dropped instead of stored, by reason (gateway: buffer_full, nats_unavailable, publish_failed; events writer: store_unavailable, malformed). The requests themselves were answered.',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ['store_unavailable', 'malformed']) dropped.inc({ reason }, 0);
  const storeFailures = new Counter({
    name: 'partner_request_log_store_failures_total',
    help: 'Request-log batches the writer could not store at one attempt (redelivered later, or dropped after the last attempt).',
    registers: [registry],
  });
  const storedAgain = new Counter({
    name: 'partner_request_log_batches_stored_again_total',
    help: 'Request-log batches that held an entry stored already (a batch delivered again after a lost ack): stored with INSERT … ON CONFLICT DO NOTHING instead of COPY, each entry once.',
    registers: [registry],
  });
  const batchEntries = new Histogram({
    name: 'partner_request_log_batch_entries',
    help: 'Entries per request-log batch stored by the writer.',
    buckets: [1, 2, 5, 10, 25, 50, 100, 200, 500, 1000],
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'partner_request_log_writer_lag_seconds',
    help: "Time from the gateway's answer to a request to the commit of its request-log entry (the log's freshness; the contract's bound is 5 s).",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  const partitionRuns = new Counter({
    name: 'partner_request_log_partition_job_runs_total',
    help: 'Passes of the request-log partition job, by outcome (ok, failed).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ['ok', 'failed']) partitionRuns.inc({ outcome }, 0);
  const partitionLastSuccess = new Gauge({
    name: 'partner_request_log_partition_job_last_success_timestamp_seconds',
    help: 'When the request-log partition job last completed a pass (epoch seconds; 0 before its first).',
    registers: [registry],
  });
  const partitions = new Gauge({ name: 'partner_request_log_partitions', help: 'Day partitions of the request log (as of the partition job\'s last pass).', registers: [registry] });
  const partitionsDropped = new Counter({ name: 'partner_request_log_partitions_dropped_total', help: 'Request-log day partitions dropped past the retention.', registers: [registry] });
  if (opts.pendingBatches) {
    const read = opts.pendingBatches;
    const source = scrapeSource(registry, 'partner_request_log_writer_pending_batches', read);
    scrapedGauge(registry, source, {
      name: 'partner_request_log_writer_pending_batches',
      help: 'Request-log batches in the request-log stream not yet taken by a writer (NaN when it could not be read). Every replica reports the same backlog: aggregate with max.',
      value: (n) => n,
    });
  }
  return {
    stored: (n: number) => {
      stored.inc(n);
      batchEntries.observe(n);
    },
    dropped: (reason: WriterDropReason, n: number) => n > 0 && dropped.inc({ reason }, n),
    storeFailed: () => storeFailures.inc(),
    storedAgain: () => storedAgain.inc(),
    lag: (seconds: number) => lag.observe(seconds),
    partitionJob: (ok: boolean, atSeconds: number, count?: number, droppedNow = 0) => {
      partitionRuns.inc({ outcome: ok ? 'ok' : 'failed' });
      if (ok) partitionLastSuccess.set(atSeconds);
      if (count !== undefined) partitions.set(count);
      if (droppedNow > 0) partitionsDropped.inc(droppedNow);
    },
  };
}

export type RequestLogWriterMetrics = ReturnType<typeof requestLogWriterMetrics>;
