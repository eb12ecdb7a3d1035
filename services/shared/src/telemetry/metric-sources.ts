// Gauges read from another system at scrape time (a database count, JetStream consumer info). When
// that read fails the gauge must not keep showing its last value as if it were current: it reads NaN
// (no alert comparison holds, graphs show a gap) and partner_metric_source_failures_total{metric}
// counts the failure (the PartnerMetricSourceFailing alert).
import { Counter, type Registry } from 'prom-client';

const NAME = 'partner_metric_source_failures_total';

/** Counts failed source reads, by metric; one counter per registry, pre-initialised for `metrics`. */
export function metricSourceFailures(registry: Registry, metrics: string[]): (metric: string) => void {
  const counter =
    (registry.getSingleMetric(NAME) as Counter<'metric'> | undefined) ??
    new Counter({ name: NAME, help: 'Scrape-time reads of a gauge\'s source (database, JetStream) that failed, by metric.', labelNames: ['metric'], registers: [registry] });
  for (const metric of metrics) counter.inc({ metric }, 0);
  return (metric) => counter.inc({ metric });
}
