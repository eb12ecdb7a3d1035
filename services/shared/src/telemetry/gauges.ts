// Gauges read from another system at scrape time (a database count, JetStream consumer info), the one
// way every process does it: one read of a source per scrape, shared by the gauges built on it (reads
// within 100 ms share the answer). When the read fails the gauges read NaN instead of their last value
// (no alert comparison holds, graphs show a gap) and partner_metric_source_failures_total{metric}
// counts the failure under the source's first gauge (metric-sources.ts; the PartnerMetricSourceFailing
// alert).
import { Gauge, type Registry } from 'prom-client';
import { metricSourceFailures } from './metric-sources.js';

export type ScrapeSource<T> = () => Promise<T | undefined>;

/**
 * A source read at most once per scrape. `read` may answer undefined (nothing to read: the gauges
 * read NaN, no failure counted); a read that throws is counted under `metric`.
 */
export function scrapeSource<T>(registry: Registry, metric: string, read: () => Promise<T | undefined>): ScrapeSource<T> {
  const failed = metricSourceFailures(registry, [metric]);
  let reading: Promise<T | undefined> | undefined;
  return () =>
    (reading ??= read()
      .catch(() => {
        failed(metric);
        return undefined;
      })
      .finally(() => setTimeout(() => (reading = undefined), 100)));
}

/** A gauge read from a source: its name, help, and its value taken from what the source read. */
export interface ScrapedGaugeSpec<T> {
  name: string;
  help: string;
  value(read: T): number;
}

/** A gauge set at scrape time from a source: `value` of what it read, NaN when the read failed. */
export function scrapedGauge<T>(registry: Registry, source: ScrapeSource<T>, spec: ScrapedGaugeSpec<T>): Gauge {
  return new Gauge({
    name: spec.name,
    help: spec.help,
    registers: [registry],
    async collect() {
      const read = await source();
      this.set(read === undefined ? Number.NaN : spec.value(read));
    },
  });
}

/**
 * Gauges sharing one source, read once per scrape; its failures are counted under the first gauge's
 * name. Returns the source, for another metric built on the same read.
 */
export function scrapedGauges<T>(
  registry: Registry,
  read: () => Promise<T | undefined>,
  specs: readonly [ScrapedGaugeSpec<T>, ...ScrapedGaugeSpec<T>[]],
): ScrapeSource<T> {
  const source = scrapeSource(registry, specs[0].name, read);
  for (const spec of specs) scrapedGauge(registry, source, spec);
  return source;
}
