// An outbox relay: puts messages committed to an outbox table on a JetStream stream. One
// implementation for every outbox (the job service's jobs and events, the submission service's
// events): the table and the stream are options. The fast path publishes a message right after its
// transaction commits; the loop publishes whatever the fast path could not (NATS down, process died
// between commit and publish). Every publish carries Nats-Msg-Id = the message's id (job id, event
// id), so a message published twice within the stream's duplicate window is stored once (and its
// consumers are idempotent by that id beyond it). Each publish is a PRODUCER span whose context
// travels in the message headers: the fast path's parent is the active context (the call that
// committed); the loop's is the context recorded with the outbox row, if the table keeps one.
// The fast path's outbox rows are deleted in batches: a row left by a crash is published again by
// the loop, and JetStream drops it as a duplicate. With `gauges`, the relay's process exports the
// outbox's backlog and the age of its oldest row, read at scrape time (NaN when the read failed).
import type { JetStreamClient, JetStreamManager, NatsConnection, PubAck } from 'nats';
import type { Registry } from 'prom-client';
import { scrapedGauges } from '../telemetry/gauges.js';
import type { Logger } from '../telemetry/logger.js';
import { ASYNC_COMMIT, prepared, type Pool } from '../db/pg.js';
import { traceHeaders } from './client.js';
import { context, extractContext, inSpan, SpanKind, type Context } from '../telemetry/tracing.js';

/** A message to publish: its id (Nats-Msg-Id), body and the trace context its PRODUCER span continues. */
interface Outgoing {
  msgId: string;
  subject: string;
  body: string;
  parent: Context;
}

/** An outbox row as the loop reads it (see OutboxOptions.columns). */
export interface OutboxRow {
  id: string;
  msg_id: string;
  subject: string;
  body: string;
  trace_context: Record<string, string> | null;
}

/** Which outbox table feeds which stream. */
export interface OutboxOptions {
  /** The outbox table (in the pool's schema), with columns id (bigserial) and created_at. */
  table: string;
  /** SELECT list yielding OutboxRow's columns: id, msg_id, subject, body (text), trace_context. */
  columns: string;
  /** The message body of a row the loop read, when it is made from columns other than `body` (default: `body`). */
  bodyOf?(row: OutboxRow & Record<string, unknown>): string;
  streamName: string;
  /** Creates the stream if it is missing (or brings it up to date); called once per connection. */
  ensureStream(jsm: JetStreamManager): Promise<void>;
}

/**
 * Deletes published rows. The commit does not wait for its WAL flush (ASYNC_COMMIT): a delete lost in
 * a crash of PostgreSQL leaves rows the loop publishes again, and JetStream drops them as duplicates
 * (their consumers are idempotent by message id beyond the window), as for a delete that failed.
 */
export async function deleteOutbox(pool: Pool, table: string, ids: string[]): Promise<void> {
  if (ids.length) await pool.query(prepared(`DELETE FROM ${table} WHERE id = ANY($1::bigint[]) AND ${ASYNC_COMMIT}`, [ids]));
}

/** Fast-path outbox rows published and not yet deleted are deleted together after at most this. */
const DELETE_BATCH_MS = 20;
const DELETE_BATCH_MAX = 200;

/** A trace context stored as a plain carrier (traceparent, tracestate) in outbox.trace_context. */
export function carrierContext(carrier: Record<string, string> | null | undefined): Context {
  return extractContext(carrier ? { get: (k: string) => carrier[k], set: () => undefined } : undefined);
}

export interface RelayMetrics {
  published(n: number): void;
  failed(): void;
}

/** The metric name prefix of the event outboxes' gauges (every process that relays events). */
export const EVENT_OUTBOX_METRICS = 'partner_event_outbox';

/**
 * `<prefix>_backlog` (rows waiting in the outbox table) and `<prefix>_oldest_age_seconds` (the oldest
 * row's age; 0 when empty): one query per scrape for both, NaN and counted in
 * partner_metric_source_failures_total{metric="<prefix>_backlog"} when it failed (telemetry/gauges.ts).
 */
export function outboxGauges(registry: Registry, pool: Pool, table: string, prefix: string): void {
  const what = prefix === EVENT_OUTBOX_METRICS ? 'Events' : 'Messages';
  scrapedGauges(
    registry,
    async () => {
      const r = await pool.query<{ n: string; age: string | null }>(`SELECT count(*) AS n, extract(epoch FROM now() - min(created_at)) AS age FROM ${table}`);
      return { n: Number(r.rows[0]?.n ?? 0), age: Number(r.rows[0]?.age ?? 0) };
    },
    [
      { name: `${prefix}_backlog`, help: `${what} committed to the outbox but not yet published to JetStream (NaN when the count failed).`, value: (r) => r.n },
      {
        name: `${prefix}_oldest_age_seconds`,
        help: `Age of the oldest row waiting in the outbox (0 when empty; NaN when the read failed).`,
        value: (r) => Math.max(0, r.age),
      },
    ],
  );
}

export class OutboxRelay {
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private streamReady: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private stopped = false;
  /** Fast-path publishes awaiting their acknowledgement. */
  private readonly publishing = new Set<Promise<void>>();
  /** Outbox rows of messages the fast path published, to delete in the next batch. */
  private published: string[] = [];
  private deleteTimer: NodeJS.Timeout | undefined;
  private deleting: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    private readonly outbox: OutboxOptions,
    private readonly opts: {
      intervalMs: number;
      logger: Logger;
      metrics?: RelayMetrics;
      /** Export the outbox's gauges (outboxGauges) in this registry under this prefix (EVENT_OUTBOX_METRICS). */
      gauges?: { registry: Registry; prefix: string };
    },
  ) {
    if (opts.gauges) outboxGauges(opts.gauges.registry, pool, outbox.table, opts.gauges.prefix);
  }

  /** Called once NATS is connected (possibly long after start). */
  attach(nc: NatsConnection): void {
    this.nc = nc;
    // JetStream API calls fail fast (default 5 s): right after a NATS restart they may hang until
    // JetStream is back, and the outbox keeps every message, so retrying soon beats waiting.
    this.js = nc.jetstream({ timeout: 1_500 });
    this.streamReady = undefined;
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'reconnect') this.kick();
    })();
    this.kick();
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      void this.drain().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.opts.intervalMs);
      });
    };
    this.timer = setTimeout(tick, this.opts.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.draining;
    await Promise.all(this.publishing);
    await this.deletePublished();
  }

  /** Creates the stream, or updates it, once per process (again after it vanished). */
  private ensureStream(): Promise<void> {
    this.streamReady ??= (async () => {
      if (!this.nc) throw new Error('NATS not connected yet');
      await this.outbox.ensureStream(await this.nc.jetstreamManager({ timeout: 1_500 }));
    })().catch((err: unknown) => {
      this.streamReady = undefined;
      throw err;
    });
    return this.streamReady;
  }

  private publishOne(js: JetStreamClient, job: Outgoing): Promise<PubAck> {
    const attributes = {
      'messaging.system': 'nats',
      'messaging.operation.type': 'send',
      'messaging.destination.name': job.subject,
      'messaging.message.id': job.msgId,
    };
    return inSpan(`send ${job.subject}`, { kind: SpanKind.PRODUCER, parent: job.parent, attributes }, () =>
      js.publish(job.subject, job.body, {
        msgID: job.msgId,
        expect: { streamName: this.outbox.streamName },
        timeout: 1_500,
        headers: traceHeaders(),
      }),
    );
  }

  private async publish(jobs: Outgoing[]): Promise<void> {
    const js = this.js;
    if (!js) throw new Error('NATS not connected yet');
    await this.ensureStream();
    try {
      await Promise.all(jobs.map((j) => this.publishOne(js, j)));
    } catch (err) {
      // The stream may have been deleted under us: recreate it on the next attempt.
      this.streamReady = undefined;
      throw err;
    }
  }

  /** Fast path after a commit: publish this message now; the loop retries if this fails. */
  publishNow(outboxId: string, job: Omit<Outgoing, 'parent'>): void {
    const p = this.publish([{ ...job, parent: context.active() }])
      .then(
        () => {
          this.opts.metrics?.published(1);
          this.published.push(outboxId);
          // Once stopping, stop() deletes what is left after the last publish.
          if (this.stopped) return;
          if (this.published.length >= DELETE_BATCH_MAX) void this.deletePublished();
          else this.deleteTimer ??= setTimeout(() => void this.deletePublished(), DELETE_BATCH_MS);
        },
        (err: unknown) => {
          this.opts.metrics?.failed();
          this.opts.logger.warn({ msgId: job.msgId, table: this.outbox.table, err: (err as Error).message }, 'not published yet; the outbox relay will retry');
        },
      )
      .finally(() => this.publishing.delete(p));
    this.publishing.add(p);
  }

  /**
   * Deletes the outbox rows of the messages the fast path published, one statement for all of them.
   * Rows a failed delete leaves behind are published again by the loop; JetStream drops the
   * duplicates by their message ids.
   */
  private deletePublished(): Promise<void> {
    clearTimeout(this.deleteTimer);
    this.deleteTimer = undefined;
    const ids = this.published;
    this.published = [];
    this.deleting = this.deleting.then(() =>
      deleteOutbox(this.pool, this.outbox.table, ids).catch((err: unknown) =>
        this.opts.logger.warn({ rows: ids.length, table: this.outbox.table, err: (err as Error).message }, 'published rows still in the outbox'),
      ),
    );
    return this.deleting;
  }

  /** Wakes the loop now (NATS came back). */
  kick(): void {
    void this.drain();
  }

  /** Publishes outbox rows older than a second (younger ones are the fast path's), in batches. */
  drain(): Promise<void> {
    this.draining ??= this.drainOnce().finally(() => {
      this.draining = undefined;
    });
    return this.draining;
  }

  private async drainOnce(): Promise<void> {
    if (!this.js) return;
    for (let batch = 0; batch < 50 && !this.stopped; batch++) {
      const client = await this.pool.connect().catch(() => undefined);
      if (!client) return;
      let published = 0;
      try {
        await client.query('BEGIN');
        const rows = (
          await client.query<OutboxRow & Record<string, unknown>>(
            `SELECT ${this.outbox.columns} FROM ${this.outbox.table}
              WHERE created_at < now() - interval '1 second'
              ORDER BY id LIMIT 200 FOR UPDATE SKIP LOCKED`,
          )
        ).rows;
        if (rows.length > 0) {
          await this.publish(
            rows.map((r) => ({ msgId: r.msg_id, subject: r.subject, body: this.outbox.bodyOf?.(r) ?? r.body, parent: carrierContext(r.trace_context) })),
          );
          await client.query(`DELETE FROM ${this.outbox.table} WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
        }
        await client.query('COMMIT');
        published = rows.length;
        if (published) this.opts.metrics?.published(published);
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        this.opts.metrics?.failed();
        this.opts.logger.warn({ err: (err as Error).message }, 'outbox relay could not publish; will retry');
        return;
      } finally {
        client.release();
      }
      if (published < 200) return;
    }
  }
}
