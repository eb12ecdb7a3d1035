// The events service's metrics: events stored in the feed, stream messages not stored (already
// stored), and events removed past their retention.
import { Counter, type Registry } from 'prom-client';

export function eventsMetrics(registry: Registry) {
  const stored = new Counter({ name: 'partner_events_stored_total', help: 'Events stored in the feed.', registers: [registry] });
  const skipped = new Counter({
    name: 'partner_events_skipped_total',
    help: 'Stream messages not stored (already stored: a redelivery or a republished event).',
    registers: [registry],
  });
  const swept = new Counter({ name: 'partner_events_swept_total', help: 'Events removed past their retention.', registers: [registry] });
  return {
    stored: (n: number) => stored.inc(n),
    skipped: (n: number) => skipped.inc(n),
    swept: (n: number) => swept.inc(n),
  };
}
