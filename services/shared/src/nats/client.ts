// NATS: connection helper and the names of every subject and stream, derived from one prefix so
// deployments and test runs can share a server without seeing each other's messages; the readiness
// check of a connection; trace context in message headers.
import { connect, DiscardPolicy, headers, nanos, RetentionPolicy, StorageType, type JetStreamManager, type MsgHdrs, type NatsConnection, type StreamConfig } from 'nats';
import type { Logger } from '../telemetry/logger.js';
import type { DependencyCheck } from '../http/ops-server.js';
import { extractContext, injectContext, type Context } from '../telemetry/tracing.js';

export type { NatsConnection };

export function natsNames(prefix: string) {
  return {
    /** JetStream work-queue stream holding queued jobs. */
    jobsStream: `${prefix}_JOBS`,
    /** Subject of a queued job of a kind, e.g. partner.jobs.submission_create. */
    jobSubject: (kind: string) => `${prefix}.jobs.${kind.replace(/[^A-Za-z0-9_-]/g, '_')}`,
    jobSubjects: `${prefix}.jobs.>`,
    /** Durable consumer the workers share. */
    workerConsumer: 'workers',
    /** Core NATS subject of settlement events (one for all jobs; every gateway subscribes). */
    settledSubject: `${prefix}.events.job_settled`,
    /** JetStream stream of the event log (API "Events"): every committed change's event, in order. */
    eventsStream: `${prefix}_EVENTS`,
    /** Subject of an event of a type in the events stream, e.g. partner.eventlog.job_succeeded. */
    eventSubject: (type: string) => `${prefix}.eventlog.${type.replace(/[^A-Za-z0-9_-]/g, '_')}`,
    eventSubjects: `${prefix}.eventlog.>`,
    /** Core NATS subject of feed wake-ups: an event of a partner was stored (payload names the partner). */
    feedWakeSubject: `${prefix}.feed.stored`,
    /** Core NATS subject waking the webhook dispatchers: deliveries were queued (by the feed writer, ping, recover). */
    webhooksDueSubject: `${prefix}.webhooks.due`,
    /** Core NATS subject on which a change of a client's provisioning or revocation reaches every gateway. */
    clientChangedSubject: `${prefix}.events.client_changed`,
    /** Core subject: a product's requirements changed (the admin command announces it); caches drop the product. */
    productChangedSubject: `${prefix}.events.product_changed`,
    /** JetStream work-queue stream of request-log batches: the gateways publish, the events service stores them. */
    requestLogStream: `${prefix}_REQUESTLOG`,
    /** Subject of a batch of request-log entries. */
    requestLogSubject: `${prefix}.requestlog.batch`,
    /** Durable consumer the request-log writers share. */
    requestLogConsumer: 'request-log-writer',
  };
}

/**
 * For a short-lived process (an admin command): connects, publishes one message on a core subject,
 * flushes and closes. False when NATS could not be reached within timeoutMs.
 */
export async function publishOnce(url: string, subject: string, data: string, timeoutMs = 3_000): Promise<boolean> {
  let nc: NatsConnection | undefined;
  try {
    nc = await connect({ servers: url.split(','), name: 'admin', timeout: timeoutMs, maxReconnectAttempts: 0 });
    nc.publish(subject, data);
    await Promise.race([nc.flush(), new Promise((_, reject) => setTimeout(() => reject(new Error('flush timed out')), timeoutMs).unref())]);
    return true;
  } catch {
    return false;
  } finally {
    await nc?.close().catch(() => undefined);
  }
}

/**
 * Connects with endless reconnects. With waitOnFirstConnect the promise settles once a server is
 * reached, so a process may start before NATS and catch up when it comes.
 */
export async function connectNats(opts: { url: string; name: string; logger: Logger }): Promise<NatsConnection> {
  const nc = await connect({
    servers: opts.url.split(','),
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    pingInterval: 10_000,
    // No caller's stack captured for every request (JetStream publishes, acks with a reply): three
    // Error objects per request, 4–8 % of the job service's CPU per submit in the bench's profile.
    // A failed request still names its subject and its code.
    noAsyncTraces: true,
  });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') {
        opts.logger.warn({ nats: s.type, data: String(s.data) }, 'NATS connection status');
      }
    }
  })();
  return nc;
}

/** JetStream's duplicate window for the jobs stream, unless the job service configures another. */
export const DEFAULT_DUPLICATE_WINDOW_MS = 10 * 60_000;

/** The settings every stream of ours has: file storage, its replicas, and the duplicate window of Nats-Msg-Id. */
interface StreamOptions {
  replicas: number;
  /** Publishes carry Nats-Msg-Id (the job or event id): a message published twice in this window is stored once. */
  duplicateWindowMs: number;
}

/**
 * Creates a stream if it is missing; `update` also brings an existing stream's settings up to date.
 * Several processes may race to create it: "already in use" means another one did.
 */
async function ensureStream(jsm: JetStreamManager, own: Partial<StreamConfig> & { name: string }, opts: StreamOptions, update: boolean): Promise<void> {
  const config = { ...own, storage: StorageType.File, num_replicas: opts.replicas, duplicate_window: nanos(opts.duplicateWindowMs) };
  try {
    await jsm.streams.info(config.name);
    if (update) await jsm.streams.update(config.name, config);
  } catch (err) {
    if (!/stream not found/i.test((err as Error).message)) throw err;
    await jsm.streams.add(config).catch((e: unknown) => {
      if (!/already in use/i.test((e as Error).message)) throw e;
    });
  }
}

/**
 * Creates the jobs work-queue stream if it is missing. The job service (the publisher, `owner`)
 * also brings an existing stream's settings up to date; workers only create it when they start
 * first, so the two never overwrite each other's settings.
 */
export function ensureJobsStream(jsm: JetStreamManager, names: ReturnType<typeof natsNames>, opts: StreamOptions & { owner: boolean }): Promise<void> {
  const own = { name: names.jobsStream, subjects: [names.jobSubjects], retention: RetentionPolicy.Workqueue, discard: DiscardPolicy.New };
  return ensureStream(jsm, own, opts, opts.owner);
}

/** How long the events stream keeps a message: the events service stores it long before that. */
export const EVENTS_STREAM_MAX_AGE_MS = 7 * 24 * 3_600_000;

/**
 * Creates the events stream if it is missing (publishers and the events service alike; none of them
 * overwrites an existing stream's settings). Limits retention: the events service reads it with an
 * ordered consumer from the position it stored last, so messages stay after they were read.
 */
export function ensureEventsStream(jsm: JetStreamManager, names: ReturnType<typeof natsNames>, opts: StreamOptions): Promise<void> {
  const own = {
    name: names.eventsStream,
    subjects: [names.eventSubjects],
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_age: nanos(EVENTS_STREAM_MAX_AGE_MS),
  };
  return ensureStream(jsm, own, opts, false);
}

/** How long the request-log stream keeps a batch no writer took (the log is best effort: older ones are dropped). */
export const REQUEST_LOG_STREAM_MAX_AGE_MS = 60 * 60_000;
/** Bytes the request-log stream holds at most; a publish beyond it is refused (the gateway counts the entries dropped). */
export const REQUEST_LOG_STREAM_MAX_BYTES = 512 * 1024 * 1024;

/**
 * Creates the request-log stream if it is missing (the gateways, which publish, and the events service,
 * which consumes; neither overwrites an existing stream's settings). A work queue: a batch leaves it once a
 * writer has stored (or given up on) it; bounded in age and bytes, refusing new batches when full, so a
 * writer that is down never grows it without limit.
 */
export function ensureRequestLogStream(jsm: JetStreamManager, names: ReturnType<typeof natsNames>, opts: StreamOptions): Promise<void> {
  const own = {
    name: names.requestLogStream,
    subjects: [names.requestLogSubject],
    retention: RetentionPolicy.Workqueue,
    discard: DiscardPolicy.New,
    max_age: nanos(REQUEST_LOG_STREAM_MAX_AGE_MS),
    max_bytes: REQUEST_LOG_STREAM_MAX_BYTES,
  };
  return ensureStream(jsm, own, opts, false);
}

/**
 * Dependency check of a connection (reported on /readyz's body and /dependencies, never gating
 * readiness): failed while it is closed or disconnected (reconnecting), else a round trip to the server. `nc` may be a getter, for processes that connect in the background.
 */
export function natsReadiness(nc: NatsConnection | (() => NatsConnection | undefined)): DependencyCheck {
  const tracked = new WeakMap<NatsConnection, { connected: boolean }>();
  const track = (conn: NatsConnection) => {
    let state = tracked.get(conn);
    if (!state) {
      const s = { connected: true };
      tracked.set(conn, s);
      state = s;
      void (async () => {
        for await (const st of conn.status()) {
          if (st.type === 'disconnect') s.connected = false;
          if (st.type === 'reconnect') s.connected = true;
        }
      })().catch(() => undefined);
    }
    return state;
  };
  const get = typeof nc === 'function' ? nc : () => nc;
  if (typeof nc !== 'function') track(nc);
  return async () => {
    const conn = get();
    if (!conn) throw new Error('not connected yet');
    if (conn.isClosed()) throw new Error('connection closed');
    if (!track(conn).connected) throw new Error('disconnected; reconnecting');
    await conn.flush();
  };
}

/** Message headers carrying the active trace context (traceparent) for a publish; none untraced. */
export function traceHeaders(ctx?: Context): MsgHdrs | undefined {
  const h = headers();
  injectContext(h, ctx);
  return h.keys().length > 0 ? h : undefined;
}

/** The trace context a message's headers carry (ROOT_CONTEXT when none). */
export function contextFromHeaders(h: MsgHdrs | undefined): Context {
  return extractContext(h);
}
