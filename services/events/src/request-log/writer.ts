// The request log's writer: takes the gateways' batches from the request-log work-queue stream (a
// durable consumer every events replica shares) and stores each with one COPY into request_log, in
// the day partitions of its entries (created when missing). COPY is PostgreSQL's bulk load: its rows
// cost about half of what an INSERT from unnested column arrays costs, on both sides (docs/performance.md,
// "Issue 47, eleventh session"), but it cannot skip a row already stored. An entry stored twice (a batch
// delivered again after a lost ack) makes the COPY fail on the primary key, which holds its id; that
// batch is then stored with INSERT … ON CONFLICT DO NOTHING, so each entry is inserted once.
//
// A store that is down (connections refused, statements failing) costs the log, never the stream's
// health: the batch is handed back with a delay (nak) and tried again, at most maxDeliver times in
// all; after the last it is terminated (removed from the stream) and its entries counted in
// partner_request_log_dropped_total{reason="store_unavailable"}. So a long outage never piles up
// batches in the stream, and logging resumes by itself once the store answers. A batch that does
// not parse is terminated and counted (malformed).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AckPolicy, nanos, type JsMsg, type NatsConnection } from 'nats';
import { from as copyFrom } from 'pg-copy-streams';
import type { Logger } from '@partner/shared/telemetry/logger';
import { ASYNC_COMMIT, withTx, type Pool } from '@partner/shared/db/pg';
import { ensureRequestLogStream, natsNames } from '@partner/shared/nats/client';
import { endable } from '@partner/shared/nats/endable-messages';
import { isRequestLogId, type RequestLogBatch, type RequestLogEntry } from '@partner/shared/domain/request-log';
import { dayStart, ensurePartitions } from './partitions.js';
import type { RequestLogWriterMetrics } from './metrics.js';

export interface RequestLogWriterOptions {
  /** Where entries are inserted (REQUEST_LOG_DATABASE_URL, or the service's pool). */
  store: Pool;
  /** The service's pool: partitions are created on it (DDL needs the schema's owner). */
  ddl: Pool;
  nc: NatsConnection;
  names: ReturnType<typeof natsNames>;
  logger: Logger;
  metrics: RequestLogWriterMetrics;
  /** Deliveries of a batch at most (the first and the retries) before it is dropped. */
  maxDeliver: number;
  /** Delay before a batch that could not be stored is delivered again. */
  retryDelayMs: number;
}

const COLUMNS = [
  'id',
  'tenant_id',
  'partner_id',
  'created_at',
  'request_id',
  'method',
  'path',
  'query',
  'status',
  'duration_ms',
  'client_id',
  'principal_id',
  'idempotency_key',
  'idempotent_replayed',
  'job_id',
  'error_code',
  'request_headers',
  'request_body',
  'request_body_truncated',
  'request_body_size_bytes',
  'response_body',
  'response_body_truncated',
  'response_body_size_bytes',
] as const;
const TYPES = [
  'uuid',
  'text',
  'text',
  'timestamptz',
  'text',
  'text',
  'text',
  'text',
  'smallint',
  'real',
  'text',
  'text',
  'text',
  'boolean',
  'text',
  'text',
  'json',
  'json',
  'boolean',
  'integer',
  'json',
  'boolean',
  'integer',
];
// A batch delivered again: one statement, its own transaction; the log is best effort, so its commit
// does not wait for the WAL flush (ASYNC_COMMIT holds for this statement's transaction only).
const INSERT_SQL = `INSERT INTO request_log (${COLUMNS.join(', ')})
  SELECT u.* FROM unnest(${TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) AS u WHERE ${ASYNC_COMMIT}
  ON CONFLICT DO NOTHING`;

const uuidOf = (id: string): string => {
  const h = id.slice(4);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** An entry's column values, in COLUMNS' order. */
function rowOf(e: RequestLogEntry): unknown[] {
  return [
    uuidOf(e.id),
    e.tenantId,
    e.partnerId,
    e.createdAt,
    e.requestId,
    e.method,
    e.path,
    e.query,
    e.status,
    e.durationMs,
    e.clientId,
    e.principalId,
    e.idempotencyKey,
    e.idempotentReplayed,
    e.jobId,
    e.errorCode,
    JSON.stringify(e.requestHeaders ?? {}),
    e.requestBodyJson ?? null,
    e.requestBodyTruncated,
    e.requestBodySizeBytes,
    e.responseBodyJson ?? null,
    e.responseBodyTruncated,
    e.responseBodySizeBytes,
  ];
}

/** The INSERT's parameters: one array per column. */
function insertValues(entries: readonly RequestLogEntry[]): unknown[][] {
  const cols: unknown[][] = COLUMNS.map(() => []);
  for (const e of entries) rowOf(e).forEach((v, i) => cols[i]!.push(v));
  return cols;
}

const COPY_SQL = `COPY request_log (${COLUMNS.join(', ')}) FROM STDIN`;

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value as COPY's text format reads it: \N for null, t/f, and a backslash before what would end a field or a row. */
function copyField(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return String(v);
  const s = String(v);
  return COPY_SPECIAL.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : s;
}

/** The COPY's data: one line per entry, its values tab-separated in COLUMNS' order. */
function copyText(entries: readonly RequestLogEntry[]): string {
  let text = '';
  for (const e of entries) text += `${rowOf(e).map(copyField).join('\t')}\n`;
  return text;
}

/** The error PostgreSQL answered, under the DomainError withTx made of it. */
const pgErrorOf = (err: unknown): { code?: unknown; message?: unknown } =>
  ((err as { cause?: unknown }).cause ?? err) as { code?: unknown; message?: unknown };

/** The entries of a stream message, or undefined when it is not a batch of entries. */
export function parseBatch(m: { json<T>(): T }): RequestLogEntry[] | undefined {
  try {
    const batch = m.json<RequestLogBatch>();
    if (!batch || !Array.isArray(batch.entries)) return undefined;
    const ok = batch.entries.every(
      (e) =>
        e &&
        typeof e.id === 'string' &&
        isRequestLogId(e.id) &&
        typeof e.tenantId === 'string' &&
        typeof e.partnerId === 'string' &&
        typeof e.createdAt === 'string' &&
        !Number.isNaN(Date.parse(e.createdAt)) &&
        Number.isInteger(e.status),
    );
    return ok ? batch.entries : undefined;
  } catch {
    return undefined;
  }
}

export class RequestLogWriter {
  private stopped = false;
  private running: Promise<void> | undefined;
  private stopCurrent: (() => void) | undefined;
  /** Days whose partition is known to exist. */
  private readonly days = new Set<number>();

  constructor(private readonly opts: RequestLogWriterOptions) {}

  start(): void {
    this.running = this.loop();
    // After NATS comes back, consume afresh at once rather than when the pull's heartbeats are missed
    // (up to a minute): the consume loop ends, and the loop follows the stream again.
    void (async () => {
      for await (const s of this.opts.nc.status()) {
        if (this.stopped) return;
        if (s.type === 'reconnect') this.stopCurrent?.();
      }
    })().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopCurrent?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.follow();
      } catch (err) {
        if (this.stopped) break;
        this.opts.logger.warn({ err: (err as Error).message }, 'request-log writer interrupted; resuming');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private async follow(): Promise<void> {
    const { nc, names } = this.opts;
    const jsm = await nc.jetstreamManager({ timeout: 2_000 });
    await ensureRequestLogStream(jsm, names, { replicas: 1, duplicateWindowMs: 60_000 });
    const consumerConfig = {
      durable_name: names.requestLogConsumer,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(30_000),
      max_deliver: this.opts.maxDeliver,
    };
    try {
      await jsm.consumers.add(names.requestLogStream, consumerConfig);
    } catch (err) {
      // Another replica made it (with the same settings, or settings this one brings up to date).
      if (!/already in use|exists/i.test((err as Error).message)) throw err;
      await jsm.consumers.update(names.requestLogStream, names.requestLogConsumer, { max_deliver: this.opts.maxDeliver });
    }
    const consumer = await nc.jetstream({ timeout: 2_000 }).consumers.get(names.requestLogStream, names.requestLogConsumer);
    const messages = await consumer.consume({ max_messages: 16 });
    // stop() (or a reconnect) ends the wait for the next batch itself (endable).
    const stream = endable(messages);
    this.stopCurrent = stream.end;
    if (this.stopped) stream.end();
    try {
      for (;;) {
        const r = await stream.next();
        if (r.done) break;
        await this.handle(r.value);
        if (this.stopped) break;
      }
    } finally {
      this.stopCurrent = undefined;
      stream.end();
    }
    if (!this.stopped) throw new Error('the request-log consumer ended');
  }

  /** Stores one batch; acks, naks (to try again) or terminates it. */
  async handle(m: JsMsg): Promise<void> {
    const entries = parseBatch(m);
    if (!entries) {
      this.opts.logger.error({ seq: m.seq }, 'malformed batch on the request-log stream; dropped');
      this.opts.metrics.dropped('malformed', 1);
      m.term();
      return;
    }
    try {
      await this.store(entries);
      m.ack();
    } catch (err) {
      this.opts.metrics.storeFailed();
      const last = m.info.deliveryCount >= this.opts.maxDeliver;
      this.opts.logger.warn({ err: (err as Error).message, entries: entries.length, delivery: m.info.deliveryCount, dropped: last }, 'request-log batch not stored');
      if (last) {
        this.opts.metrics.dropped('store_unavailable', entries.length);
        m.term();
      } else m.nak(this.opts.retryDelayMs);
    }
  }

  /**
   * One COPY in its own transaction, whose commit does not wait for the WAL flush (the log is best
   * effort; ASYNC_COMMIT, in BEGIN's round trip, holds for this transaction only).
   */
  private async copy(entries: readonly RequestLogEntry[]): Promise<void> {
    const text = copyText(entries);
    await withTx(this.opts.store, (c) => pipeline(Readable.from([text]), c.query(copyFrom(COPY_SQL))), { lead: [`SELECT ${ASYNC_COMMIT}`] });
  }

  /** Inserts the entries (their days' partitions created first when missing). */
  async store(entries: readonly RequestLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const days = new Set(entries.map((e) => dayStart(Date.parse(e.createdAt))));
    const missing = [...days].filter((d) => !this.days.has(d));
    if (missing.length > 0) {
      await ensurePartitions(this.opts.ddl, missing);
      for (const d of missing) this.days.add(d);
    }
    try {
      await this.copy(entries);
    } catch (err) {
      const pgErr = pgErrorOf(err);
      // A partition dropped meanwhile (retention) or made by another replica's job: learn again next time.
      if (/no partition of relation/i.test(String(pgErr.message))) this.days.clear();
      // An entry stored already (the batch delivered again): the rest of the batch, each entry once.
      if (pgErr.code !== '23505') throw err;
      await this.opts.store.query(INSERT_SQL, insertValues(entries));
      this.opts.metrics.storedAgain();
    }
    const committed = Date.now();
    this.opts.metrics.stored(entries.length);
    for (const e of entries) this.opts.metrics.lag(Math.max(0, committed - e.answeredAtMs) / 1000);
  }
}
