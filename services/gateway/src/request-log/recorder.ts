// Records each authenticated /v1 request into the partner's request log (docs/api.md "Request log"),
// off the request's path. The pipeline calls record() once the request has been answered (its status,
// body and headers final); record() only keeps references in a bounded buffer. A timer (or a full
// batch) turns the buffer into entries (redaction: request-log/redact.ts) and ships them as one message
// on the request-log work-queue stream (JetStream), the batches waiting at most PUBLISH_CONCURRENCY
// in flight at once (one connection writes them in order); the events service's writer stores them.
//
// Losing the log never fails or slows a request: a full buffer, no NATS connection, a publish that
// fails or a stream that refuses (full) drops the entries and counts them in
// partner_request_log_dropped_total{reason}. Nothing here throws into the request.
//
// What the log learns of a mutation comes from the answer itself, without another call: its job id
// from the Job-Id header and the replay flag from Idempotent-Replayed (both set by
// jobs/mutations.ts runMutation), the Idempotency-Key as the mutation parsed it (ctx.state).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { JetStreamClient, NatsConnection } from 'nats';
import { isJobId } from '@partner/shared/domain/ids';
import { newRequestLogId, type RequestLogBatch, type RequestLogEntry } from '@partner/shared/domain/request-log';
import type { Logger } from '@partner/shared/telemetry/logger';
import type { GatewayContext } from '../context.js';
import { parseIdempotencyKey } from '../http/idempotency.js';
import type { RequestLogConfig } from '../config.js';
import { allowedHeaders, logBody, type CapturedBody } from './redact.js';

/** Batches of the log in flight at once (each a JetStream publish waiting for its ack). */
const PUBLISH_CONCURRENCY = 16;

/** Paths never logged: the log's own reads (reading the log would fill it) and the public document. */
const NOT_LOGGED = /^\/v1\/(?:requests(?:\/|$)|openapi\.json$)/;

/** What record() keeps of a request until its batch is built: references, no copies. */
interface Captured {
  answeredAtMs: number;
  durationMs: number;
  tenantId: string;
  partnerId: string;
  clientId: string;
  principalId: string | null;
  requestId: string;
  method: string;
  path: string;
  query: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  idempotencyKey: string | null | undefined;
  jobId: string | null;
  replayed: boolean;
  errorCode: string | null;
  request: CapturedBody;
  response: CapturedBody;
}

export type DropReason = 'buffer_full' | 'nats_unavailable' | 'publish_failed';

export function requestLogMetrics(registry: Registry) {
  const dropped = new Counter({
    name: 'partner_request_log_dropped_total',
    help: 'Request-log entries dropped instead of stored, by reason (gateway: buffer_full, nats_unavailable, publish_failed; events writer: store_unavailable, malformed). The requests themselves were answered.',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ['buffer_full', 'nats_unavailable', 'publish_failed']) dropped.inc({ reason }, 0);
  const recorded = new Counter({ name: 'partner_request_log_recorded_total', help: 'Requests recorded for the request log (before shipping).', registers: [registry] });
  const shipped = new Counter({ name: 'partner_request_log_shipped_total', help: 'Request-log entries published on the request-log stream.', registers: [registry] });
  const buffered = new Gauge({ name: 'partner_request_log_buffered_entries', help: 'Request-log entries held by this gateway waiting to be shipped.', registers: [registry] });
  const batchSize = new Histogram({
    name: 'partner_request_log_shipped_batch_entries',
    help: 'Entries per request-log message published by the gateway.',
    buckets: [1, 2, 5, 10, 25, 50, 100, 200, 500, 1000],
    registers: [registry],
  });
  return {
    dropped: (reason: DropReason, n: number) => n > 0 && dropped.inc({ reason }, n),
    recorded: () => recorded.inc(),
    shipped: (n: number) => {
      shipped.inc(n);
      batchSize.observe(n);
    },
    buffered: (n: number) => buffered.set(n),
  };
}

export type RequestLogMetrics = ReturnType<typeof requestLogMetrics>;

export interface RecorderOptions {
  config: RequestLogConfig;
  metrics: RequestLogMetrics;
  logger: Logger;
  /** The stream's subject. */
  subject: string;
  /** The current NATS connection, if any (the gateway connects in the background). */
  connection(): NatsConnection | undefined;
  /** Makes sure the stream exists before the first publish on a connection. */
  ensureStream?(nc: NatsConnection): Promise<void>;
}

function responseBodyOf(ctx: GatewayContext): CapturedBody {
  const body = ctx.body as unknown;
  if (body === undefined || body === null) return { kind: 'none' };
  // A JSON body's size is its text's, measured when it is written (logBody): Koa's `length` of an
  // object body is Buffer.byteLength(JSON.stringify(body)), a whole serialization, so it is read
  // only for the bodies that are not JSON.
  if (!(Buffer.isBuffer(body) || typeof body === 'string' || typeof (body as { pipe?: unknown }).pipe === 'function')) return { kind: 'json', value: body, sizeBytes: null };
  const length = ctx.response.length;
  return { kind: 'other', sizeBytes: typeof length === 'number' && Number.isFinite(length) ? length : null };
}

function requestBodyOf(ctx: GatewayContext): CapturedBody {
  const read = ctx.state.loggedRequestBody;
  if (read) return read;
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > 0) return { kind: 'other', sizeBytes: declared };
  return ctx.get('transfer-encoding') ? { kind: 'other', sizeBytes: null } : { kind: 'none' };
}

/** The job a request was about: a mutation's Job-Id, or the job read by GET /v1/jobs/{id}. */
function jobIdOf(ctx: GatewayContext): string | null {
  const header = ctx.response.get('Job-Id');
  if (header) return header;
  const id = (ctx.params as Record<string, string> | undefined)?.id;
  return ctx.path.startsWith('/v1/jobs/') && id && isJobId(id) ? id : null;
}

function keyOf(c: Captured): string | null {
  if (c.idempotencyKey !== undefined) return c.idempotencyKey;
  const raw = c.headers['idempotency-key'];
  if (typeof raw !== 'string') return null;
  try {
    return parseIdempotencyKey(raw) ?? null;
  } catch {
    return null;
  }
}

function entryOf(c: Captured): RequestLogEntry {
  const request = logBody(c.request);
  const response = logBody(c.response);
  const createdAtMs = Math.round(c.answeredAtMs - c.durationMs);
  return {
    id: newRequestLogId(createdAtMs),
    tenantId: c.tenantId,
    partnerId: c.partnerId,
    requestId: c.requestId,
    method: c.method,
    path: c.path,
    query: c.query || null,
    status: c.status,
    durationMs: c.durationMs,
    clientId: c.clientId,
    principalId: c.principalId,
    idempotencyKey: keyOf(c),
    idempotentReplayed: c.replayed,
    jobId: c.jobId,
    errorCode: c.errorCode,
    createdAt: new Date(createdAtMs).toISOString(),
    requestHeaders: allowedHeaders(c.headers),
    requestBodyJson: request.text,
    requestBodyTruncated: request.truncated,
    requestBodySizeBytes: request.sizeBytes,
    responseBodyJson: response.text,
    responseBodyTruncated: response.truncated,
    responseBodySizeBytes: response.sizeBytes,
    answeredAtMs: c.answeredAtMs,
  };
}

export class RequestRecorder {
  private captured: Captured[] = [];
  /** Built batches waiting for the publisher, with their entry counts. */
  private readonly outbox: { data: Uint8Array; entries: number }[] = [];
  private outboxEntries = 0;
  private timer: NodeJS.Timeout | undefined;
  private publishing = false;
  private stopped = false;
  private readonly ready = new WeakMap<NatsConnection, Promise<void>>();
  private readonly encoder = new TextEncoder();

  constructor(private readonly opts: RecorderOptions) {}

  /** Entries held (captured or built, not yet published). */
  get buffered(): number {
    return this.captured.length + this.outboxEntries;
  }

  /** Called by the pipeline once a request has been answered; never throws, never waits. */
  record(ctx: GatewayContext, seconds: number): void {
    try {
      const caller = ctx.state.caller;
      if (!caller || this.stopped || NOT_LOGGED.test(ctx.path) || !ctx.path.startsWith('/v1/')) return;
      if (this.buffered >= this.opts.config.bufferEntries) {
        this.opts.metrics.dropped('buffer_full', 1);
        return;
      }
      this.captured.push({
        answeredAtMs: Date.now(),
        durationMs: Math.round(seconds * 1e4) / 10,
        tenantId: caller.tenant,
        partnerId: caller.partnerId,
        clientId: caller.clientId,
        principalId: caller.principalId ?? null,
        requestId: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path,
        query: ctx.querystring,
        status: ctx.status,
        headers: ctx.headers,
        idempotencyKey: ctx.state.idempotencyKey,
        jobId: jobIdOf(ctx),
        replayed: ctx.response.get('Idempotent-Replayed') === 'true',
        errorCode: ctx.state.errorCode ?? null,
        request: requestBodyOf(ctx),
        response: responseBodyOf(ctx),
      });
      this.opts.metrics.recorded();
      if (this.captured.length >= this.opts.config.batchEntries) this.schedule(0);
      else this.schedule(this.opts.config.flushMs);
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message }, 'request not recorded in the request log');
    }
  }

  private schedule(ms: number): void {
    if (this.timer && ms > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.build();
      void this.publish();
    }, ms);
    this.timer.unref();
  }

  /** Turns what was captured into redacted entries, batched into messages. */
  private build(): void {
    const captured = this.captured;
    this.captured = [];
    const size = this.opts.config.batchEntries;
    for (let i = 0; i < captured.length; i += size) {
      const entries: RequestLogEntry[] = [];
      for (const c of captured.slice(i, i + size)) {
        try {
          entries.push(entryOf(c));
        } catch (err) {
          this.opts.metrics.dropped('publish_failed', 1);
          this.opts.logger.warn({ err: (err as Error).message }, 'request-log entry could not be built');
        }
      }
      if (entries.length === 0) continue;
      const batch: RequestLogBatch = { entries };
      this.outbox.push({ data: this.encoder.encode(JSON.stringify(batch)), entries: entries.length });
      this.outboxEntries += entries.length;
    }
    this.opts.metrics.buffered(this.buffered);
  }

  /**
   * Publishes the built batches, up to PUBLISH_CONCURRENCY at once; each that cannot go is dropped and
   * counted. Not one at a time: while NATS is away each publish waits out its timeout (2 s), and the
   * batches built meanwhile (one per flush) would each wait 2 s more behind it.
   */
  private async publish(): Promise<void> {
    if (this.publishing) return;
    this.publishing = true;
    try {
      while (this.outbox.length > 0) {
        const chunk = this.outbox.splice(0, PUBLISH_CONCURRENCY);
        for (const b of chunk) this.outboxEntries -= b.entries;
        await Promise.all(chunk.map((b) => this.publishOne(b)));
      }
    } finally {
      this.publishing = false;
      this.opts.metrics.buffered(this.buffered);
    }
    // Batches built while the last publish was in flight.
    if (this.outbox.length > 0) void this.publish();
  }

  private async publishOne(batch: { data: Uint8Array; entries: number }): Promise<void> {
    const nc = this.opts.connection();
    if (!nc || nc.isClosed()) {
      this.opts.metrics.dropped('nats_unavailable', batch.entries);
      return;
    }
    try {
      await this.streamReady(nc);
      await this.js(nc).publish(this.opts.subject, batch.data, { timeout: 2_000 });
      this.opts.metrics.shipped(batch.entries);
    } catch (err) {
      this.opts.metrics.dropped('publish_failed', batch.entries);
      this.opts.logger.debug({ err: (err as Error).message, entries: batch.entries }, 'request-log batch dropped');
    }
  }

  private jsClients = new WeakMap<NatsConnection, JetStreamClient>();

  private js(nc: NatsConnection): JetStreamClient {
    let js = this.jsClients.get(nc);
    if (!js) {
      js = nc.jetstream({ timeout: 2_000 });
      this.jsClients.set(nc, js);
    }
    return js;
  }

  private streamReady(nc: NatsConnection): Promise<void> {
    if (!this.opts.ensureStream) return Promise.resolve();
    let ready = this.ready.get(nc);
    if (!ready) {
      ready = this.opts.ensureStream(nc);
      // Tried again on the next batch if it failed.
      ready.catch(() => this.ready.delete(nc));
      this.ready.set(nc, ready);
    }
    return ready;
  }

  /** Ships what is buffered (best effort, bounded by the publish timeout), then records nothing more. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.build();
    await this.publish();
  }
}
