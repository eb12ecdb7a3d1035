// How a service records an event (domain/events.ts) in the transaction of the change it describes: a
// row of its own schema's event_outbox, which an OutboxRelay (outbox-relay.ts) publishes to the events
// stream with Nats-Msg-Id = the event id. The events service consumes that stream and is the feed's
// single writer (services/events).
import type { JetStreamManager } from 'nats';
import type { EnvReader } from '../config/env.js';
import type { PoolClient } from '../db/pg.js';
import { newEventId, type EventMessage, type EventType } from '../domain/events.js';
import { DEFAULT_DUPLICATE_WINDOW_MS, ensureEventsStream, natsNames } from './client.js';
import type { OutboxOptions } from './outbox-relay.js';

/**
 * SQL of the event_outbox INSERT of a statement that makes a change in a CTE: the message body
 * built from `source` (a CTE with tenant_id and partner_id) and `dataSql` (a jsonb expression over
 * it). Parameters: eventId, subject and type are bound as $n placeholders given here.
 */
export function outboxInsertSql(o: { source: string; eventId: string; subject: string; type: string; timestampSql: string; dataSql: string }): string {
  return `INSERT INTO event_outbox (event_id, subject, body)
     SELECT ${o.eventId}::text, ${o.subject}::text, jsonb_build_object(
              'tenantId', s.tenant_id, 'partnerId', s.partner_id,
              'event', jsonb_build_object('id', ${o.eventId}::text, 'type', ${o.type}::text, 'timestamp', ${o.timestampSql}, 'data', ${o.dataSql}))
       FROM ${o.source} s
     RETURNING id, event_id, body::text AS body`;
}

/** An event recorded in a transaction, to hand to the relay's fast path once it commits. */
export interface RecordedEvent {
  outboxId: string;
  msgId: string;
  subject: string;
  body: string;
}

/** An event to record: whose it is, its type, timestamp and data. */
export interface EventToRecord {
  owner: { tenantId: string; partnerId: string };
  type: EventType;
  timestamp: string;
  data: unknown;
}

/** The outbox row of an event (its id made here), without the outbox's own id. */
function eventRow(names: ReturnType<typeof natsNames>, e: EventToRecord): Omit<RecordedEvent, 'outboxId'> {
  const msg: EventMessage = { tenantId: e.owner.tenantId, partnerId: e.owner.partnerId, event: { id: newEventId(), type: e.type, timestamp: e.timestamp, data: e.data } };
  return { msgId: msg.event.id, subject: names.eventSubject(e.type), body: JSON.stringify(msg) };
}

/**
 * Records an event in the caller's open transaction (its schema's event_outbox): it exists if and
 * only if that transaction commits. Pass the result to publishEvents() after the commit.
 */
export async function recordEvent(
  c: PoolClient,
  names: ReturnType<typeof natsNames>,
  owner: { tenantId: string; partnerId: string },
  type: EventType,
  timestamp: string,
  data: unknown,
): Promise<RecordedEvent> {
  const row = eventRow(names, { owner, type, timestamp, data });
  const r = await c.query<{ id: string }>({
    name: 'record-event',
    text: 'INSERT INTO event_outbox (event_id, subject, body) VALUES ($1, $2, $3) RETURNING id',
    values: [row.msgId, row.subject, row.body],
  });
  return { outboxId: r.rows[0]!.id, ...row };
}

/** recordEvent for several events in one statement (one round trip), in the order given. */
export async function recordEvents(c: PoolClient, names: ReturnType<typeof natsNames>, events: readonly EventToRecord[]): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const rows = events.map((e) => eventRow(names, e));
  const r = await c.query<{ id: string; event_id: string }>({
    name: 'record-events',
    text: `INSERT INTO event_outbox (event_id, subject, body)
           SELECT event_id, subject, body FROM unnest($1::text[], $2::text[], $3::jsonb[]) WITH ORDINALITY AS e(event_id, subject, body, n) ORDER BY n
           RETURNING id, event_id`,
    values: [rows.map((x) => x.msgId), rows.map((x) => x.subject), rows.map((x) => x.body)],
  });
  const ids = new Map(r.rows.map((x) => [x.event_id, x.id]));
  return rows.map((x) => ({ outboxId: ids.get(x.msgId)!, ...x }));
}

/** The relay options for a schema's event_outbox table. */
export function eventOutbox(names: ReturnType<typeof natsNames>, stream: { replicas: number; duplicateWindowMs: number }): OutboxOptions {
  return {
    table: 'event_outbox',
    columns: 'id, event_id AS msg_id, subject, body::text AS body, NULL::jsonb AS trace_context',
    streamName: names.eventsStream,
    ensureStream: (jsm: JetStreamManager) => ensureEventsStream(jsm, names, stream),
  };
}

/** Settings of the events stream, read by every service that publishes to or consumes it. */
export interface EventStreamConfig {
  eventsStream: { replicas: number; duplicateWindowMs: number };
}

export function readEventStream(env: EnvReader): EventStreamConfig {
  return {
    eventsStream: {
      replicas: env.int('EVENTS_STREAM_REPLICAS', { default: 1, min: 1, max: 5, doc: 'replicas of the JetStream events stream' }),
      duplicateWindowMs: env.int('EVENTS_DUPLICATE_WINDOW_MS', { default: DEFAULT_DUPLICATE_WINDOW_MS, min: 1_000, max: 24 * 3_600_000, doc: 'the events stream\'s duplicate window: an event published twice within it is stored once' }),
    },
  };
}
