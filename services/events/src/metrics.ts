// The events service's metrics: events stored in the feed, stream messages not stored (already
// stored), events removed past their retention, and the feed writer's lag: the events in the events
// stream not stored yet (a gauge read at scrape time) and the time from an event's publish to its
// commit in the feed (a histogram).
import { Counter, Histogram, type Registry } from 'prom-client';
import { scrapedGauge, scrapeSource } from '@partner/shared/telemetry/gauges';

/** Where the feed writer stands, read at scrape time: the stream's last position, and the feed's. */
export interface WriterPosition {
  /** The events stream's last sequence; undefined while there is no NATS connection (the gauge reads NaN). */
  streamLastSeq(): Promise<number | undefined>;
  /** The highest stream position stored in (or swept from) the feed, by any writer. */
  storedThrough(): Promise<bigint>;
  /** The highest position this process's writer handled, stored or skipped (0 before its first batch). */
  handledThrough(): bigint;
}

export function eventsMetrics(registry: Registry, position?: WriterPosition) {
  const stored = new Counter({ name: 'partner_events_stored_total', help: 'Events stored in the feed.', registers: [registry] });
  const skipped = new Counter({
    name: 'partner_events_skipped_total',
    help: 'Stream messages not stored (already stored: a redelivery or a republished event).',
    registers: [registry],
  });
  const swept = new Counter({ name: 'partner_events_swept_total', help: 'Events removed past their retention.', registers: [registry] });
  const storeDelay = new Histogram({
    name: 'partner_events_store_delay_seconds',
    help: 'Time from an event\'s publish to the events stream (its JetStream timestamp) to the commit of its rows in the feed.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
    registers: [registry],
  });
  if (position) {
    // One stream info and one query per scrape; NaN (and counted) when either failed, NaN without NATS.
    const source = scrapeSource(registry, 'partner_events_writer_pending', async () => {
      const last = await position.streamLastSeq();
      if (last === undefined) return undefined;
      const through = await position.storedThrough();
      const handled = position.handledThrough();
      const done = through > handled ? through : handled;
      return Math.max(0, last - Number(done));
    });
    scrapedGauge(registry, source, {
      name: 'partner_events_writer_pending',
      help: 'Events in the events stream not yet stored in the feed by the writer (NaN when it could not be read). Every replica reports the same backlog: aggregate with max.',
      value: (n) => n,
    });
  }
  return {
    stored: (n: number) => stored.inc(n),
    skipped: (n: number) => skipped.inc(n),
    swept: (n: number) => swept.inc(n),
    storeDelay: (seconds: number) => storeDelay.observe(seconds),
  };
}
