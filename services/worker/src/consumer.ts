// The JetStream side of the worker: a durable pull consumer shared by every worker process
// (explicit ack), bounded concurrency, working() heartbeats for long jobs, nak(delay) to retry,
// and a bound on deliveries after which the job is failed for good — so every job settles. Each
// delivery is a CONSUMER span continuing the trace carried in the message headers (its gRPC calls are
// children) and one log line with its outcome and duration.
import { AckPolicy, DeliverPolicy, nanos, type ConsumerMessages, type JsMsg, type NatsConnection } from 'nats';
import { DomainError } from '@partner/shared/domain/errors';
import { isJobId } from '@partner/shared/domain/ids';
import { isSettled, JOB_STATUS, parseJobMessage } from '@partner/shared/domain/jobs';
import { sandboxHoldS } from '@partner/shared/domain/sandbox';
import { Batcher } from '@partner/shared/db/batcher';
import { contextFromHeaders, DEFAULT_DUPLICATE_WINDOW_MS, ensureJobsStream, natsNames } from '@partner/shared/nats/client';
import { inSpan, SpanKind, SpanStatusCode, traceFields } from '@partner/shared/telemetry/tracing';
import type { Logger } from '@partner/shared/telemetry/logger';
import type { PromiseClient, serviceDefs } from '@partner/shared/grpc';
import { deterministicFailure, HANDLERS, JobFailed, type HandlerContext, type JobToRun } from './job-handlers.js';
import { cachedProducts, type ProductLookup } from './products.js';
import { cachedRatingPlans, type RatingPlanLookup } from './rating-plans.js';
import type { WorkerConfig } from './config.js';
import { Semaphore } from './semaphore.js';

type Defs = ReturnType<typeof serviceDefs>;

/** `skipped`: settled or cancelled before this delivery could claim it; `held`: deferred by sandbox:hold. */
export type DeliveryOutcome = 'succeeded' | 'failed' | 'retried' | 'skipped' | 'held';

/** What one delivery came to, for its span and log line. */
export interface DeliveryReport {
  jobId: string;
  kind: string;
  outcome: DeliveryOutcome | 'malformed';
  error?: string;
  retryInMs?: number;
  gaveUp?: boolean;
}

type Outcome = { resultJson: string } | { error: { code: string; message: string; retryable: boolean } };

/** A job ready to run (with how to stop marking it running), or one that has settled already. */
type Loaded =
  | { job: JobToRun; payload: unknown; stopMarking(): void; marked(): Promise<void> }
  | { settled: true; kind: string };

export interface WorkerMetrics {
  inUse(delta: number): void;
  processed(kind: string, outcome: DeliveryOutcome): void;
}

export class JobConsumer {
  private messages: ConsumerMessages | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private stopping = false;
  private readonly products: ProductLookup;
  private readonly ratingPlans: RatingPlanLookup;
  private readonly slots: Semaphore;
  /** Claims of concurrent deliveries, sent together: one ClaimJobs call (one statement) for all. */
  private readonly claims: Batcher<{ jobId: string; delivery: number }, boolean>;

  constructor(
    private readonly nc: NatsConnection,
    private readonly config: WorkerConfig,
    private readonly clients: HandlerContext['clients'] & { job: PromiseClient<Defs['job']> },
    private readonly logger: Logger,
    private readonly metrics?: WorkerMetrics,
    /** Called after a job's effect, before it is settled and acked (the fault tests' crash point). */
    private readonly afterEffect?: (jobId: string) => void,
  ) {
    this.slots = new Semaphore(config.concurrency);
    this.names = natsNames(config.natsPrefix);
    this.products = cachedProducts(clients.policy, config.productCacheMs);
    this.ratingPlans = cachedRatingPlans(clients.policy);
    // One claim call in flight: a lone claim goes at once, and the claims that arrive meanwhile share
    // the next call (one gRPC message, one UPDATE, one commit for all of them).
    this.claims = new Batcher(async (items) => (await this.clients.job.ClaimJobs({ items })).claimed, {
      maxSize: Math.max(1, config.concurrency),
      maxInFlight: 1,
      keyOf: (i) => i.jobId,
    });
  }

  private readonly names: ReturnType<typeof natsNames>;

  async start(): Promise<void> {
    // Before the first job: a product whose requirements change is dropped from the cache at once
    // (the admin command announces it), so jobs that run after the change see the new version.
    this.products.attach(this.nc, this.names.productChangedSubject);
    await this.ensureConsumer();
    await this.pull();
    // A pull request does not survive a server restart, and the client would only notice after two
    // missed heartbeats (up to 30 s): pull afresh as soon as the connection comes back.
    void (async () => {
      for await (const status of this.nc.status()) {
        if (status.type === 'reconnect' && !this.stopping) await this.pullAfterReconnect();
      }
    })();
  }

  /**
   * pull() once the connection is back, tried again every 500 ms for up to 10 s: a restarted server
   * answers before its JetStream does (it recovers its streams first), and a pull that failed then
   * would leave the worker waiting for the missed heartbeats.
   */
  private async pullAfterReconnect(): Promise<void> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        await this.pull();
        return;
      } catch (err) {
        if (attempt >= 20) {
          this.logger.warn({ err: (err as Error).message, attempts: attempt }, 'could not pull after reconnect');
          return;
        }
        await this.sleep(500).catch(() => undefined);
      }
    }
  }

  /** Creates the stream and the shared durable consumer if missing (or brings its settings up to date). */
  private async ensureConsumer(): Promise<void> {
    const jsm = await this.nc.jetstreamManager();
    await ensureJobsStream(jsm, this.names, {
      replicas: this.config.streamReplicas,
      duplicateWindowMs: DEFAULT_DUPLICATE_WINDOW_MS,
      owner: false,
    });
    const consumerConfig = {
      durable_name: this.names.workerConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(this.config.ackWaitMs),
      // Unbounded at the broker: the worker itself bounds deliveries and settles the job as failed,
      // so a job is never dropped without settling.
      max_deliver: -1,
      max_ack_pending: Math.max(1_000, this.config.concurrency * 4),
      filter_subject: this.names.jobSubjects,
    };
    let existing: Awaited<ReturnType<typeof jsm.consumers.info>> | undefined;
    try {
      existing = await jsm.consumers.info(this.names.jobsStream, this.names.workerConsumer);
    } catch (err) {
      if (!/consumer not found/i.test((err as Error).message)) throw err;
    }
    if (!existing) {
      await jsm.consumers.add(this.names.jobsStream, consumerConfig).catch(async (err: unknown) => {
        // Another worker created it meanwhile.
        if (!/already (exists|in use)/i.test((err as Error).message)) throw err;
      });
    } else if (
      existing.config.ack_wait !== consumerConfig.ack_wait ||
      existing.config.max_ack_pending !== consumerConfig.max_ack_pending ||
      existing.config.max_deliver !== consumerConfig.max_deliver ||
      existing.config.filter_subject !== consumerConfig.filter_subject
    ) {
      // Only when the settings changed: a worker starting should not rewrite a shared consumer.
      await jsm.consumers.update(this.names.jobsStream, this.names.workerConsumer, consumerConfig);
    }
  }

  /** Starts (or restarts) pulling; in-flight messages of the previous pull are still acked normally. */
  private async pull(): Promise<void> {
    const previous = this.messages;
    const consumer = await this.nc.jetstream().consumers.get(this.names.jobsStream, this.names.workerConsumer);
    // A deleted consumer (or stream) ends the iterator instead of retrying silently for ever: the loop
    // then restarts, recreating them (restartLoop).
    this.messages = await consumer.consume({ max_messages: this.config.concurrency, abort_on_missing_resource: true });
    this.loopDownSince = undefined;
    void this.loop(this.messages);
    await previous?.close().catch(() => undefined);
  }

  /**
   * Why the process is wedged, for /livez: the consume loop has been down (and restarting it failed)
   * for longer than livenessAfterMs. The kubelet then restarts the process.
   */
  wedged(now = Date.now()): string | undefined {
    if (this.loopDownSince === undefined || now - this.loopDownSince < this.config.livenessAfterMs) return undefined;
    return `job consumer down for ${Math.round((now - this.loopDownSince) / 1000)} s`;
  }

  private loopDownSince: number | undefined;

  /** The consume loop ended while the worker runs: restart it (consumer and pull) until it works. */
  private async restartLoop(): Promise<void> {
    this.loopDownSince ??= Date.now();
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        await this.ensureConsumer();
        await this.pull();
        this.logger.warn({ attempt }, 'job consumer restarted');
        return;
      } catch (err) {
        this.logger.error({ err: (err as Error).message, attempt }, 'could not restart the job consumer');
        await this.sleep(Math.min(500 * 2 ** (attempt - 1), 10_000)).catch(() => undefined);
      }
    }
  }

  private async loop(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const m of messages) {
        await this.slots.acquire();
        this.metrics?.inUse(1);
        const p = this.handle(m).finally(() => {
          this.inflight.delete(p);
          this.metrics?.inUse(-1);
          this.slots.release();
        });
        this.inflight.add(p);
      }
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'job consumer stopped');
    }
    // Replaced by a newer pull (reconnect) or stopping: nothing to do. Otherwise it died on its own.
    if (this.stopping || this.messages !== messages) return;
    this.logger.error('job consumer loop ended; restarting it');
    await this.restartLoop();
  }

  private backoff(delivery: number): number {
    const b = this.config.backoffMs;
    return b[Math.min(delivery - 1, b.length - 1)] ?? 1_000;
  }

  /** Waits ms; a stop (its abort) ends the wait at once, rejecting. The retry loops above wait with it. */
  private sleep = (ms: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (this.abort.signal.aborted) return reject(new Error('worker stopping'));
      const onAbort = () => {
        clearTimeout(t);
        reject(new Error('worker stopping'));
      };
      const t = setTimeout(() => {
        this.abort.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      this.abort.signal.addEventListener('abort', onAbort, { once: true });
    });

  private async settleFailed(jobId: string, error: { code: string; message: string; retryable: boolean }): Promise<void> {
    await this.clients.job.SettleJob({ jobId, error });
  }

  /** One delivery: a CONSUMER span (parent: the publisher's context) and one log line. */
  private handle(m: JsMsg): Promise<void> {
    const started = process.hrtime.bigint();
    const attributes = {
      'messaging.system': 'nats',
      'messaging.operation.type': 'process',
      'messaging.destination.name': m.subject,
      'messaging.consumer.group.name': this.names.workerConsumer,
      'messaging.message.delivery_count': m.info.deliveryCount,
    };
    return inSpan(`process ${m.subject}`, { kind: SpanKind.CONSUMER, parent: contextFromHeaders(m.headers), attributes }, async (span) => {
      const r = await this.process(m);
      span.setAttributes({ 'partner.job.id': r.jobId, 'partner.job.kind': r.kind, 'partner.job.outcome': r.outcome });
      if (r.outcome === 'retried') span.setStatus({ code: SpanStatusCode.ERROR, message: r.error ?? 'retried' });
      const fields = {
        jobId: r.jobId,
        delivery: m.info.deliveryCount,
        seq: m.info.streamSequence,
        kind: r.kind,
        outcome: r.outcome,
        ...(r.error ? { err: r.error } : {}),
        ...(r.retryInMs !== undefined ? { retryInMs: r.retryInMs } : {}),
        ms: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
        ...traceFields(),
      };
      if (r.outcome === 'retried' || r.outcome === 'malformed') this.logger.warn(fields, 'job');
      else if (r.gaveUp) this.logger.error(fields, 'job');
      else this.logger.info(fields, 'job');
    });
  }

  /**
   * One delivery, in steps: give up after the last delivery; load the job (from the message, or
   * StartJob); run its handler; settle it; ack. A dependency's failure naks it for a later delivery.
   */
  async process(m: JsMsg): Promise<DeliveryReport> {
    const delivery = m.info.deliveryCount;
    const message = parseJobMessage(m.string());
    if (!message || !isJobId(message.jobId)) {
      m.term();
      return { jobId: '', kind: 'unknown', outcome: 'malformed', error: 'malformed job message terminated' };
    }
    const { jobId } = message;
    const heartbeat = setInterval(() => m.working(), Math.max(200, Math.floor(this.config.ackWaitMs / 3)));
    // Only the unusual paths log here (the delivery's own line is written by handle()).
    const log = () => this.logger.child({ jobId, delivery });
    let kind = 'unknown';
    let loaded: Loaded | undefined;
    try {
      const heldMs = this.heldFor(m, message);
      if (heldMs > 0) {
        // sandbox:hold: the job stays accepted (unclaimed, so cancellable); the message comes back
        // when the hold ends, and this slot takes other work meanwhile.
        const heldKind = 'kind' in message ? message.kind : 'unknown';
        m.nak(heldMs);
        this.metrics?.processed(heldKind, 'held');
        return { jobId, kind: heldKind, outcome: 'held', retryInMs: heldMs };
      }
      if (delivery > this.config.maxDeliveries) return await this.giveUp(m, jobId);
      loaded = await this.load(message, delivery, log);
      if ('settled' in loaded) {
        this.metrics?.processed(loaded.kind, 'skipped');
        m.ack();
        return { jobId, kind: loaded.kind, outcome: 'skipped' };
      }
      kind = loaded.job.kind;
      const outcome = await this.run(loaded.job, loaded.payload, log);
      loaded.stopMarking();
      await loaded.marked();
      const settled = await this.settle(jobId, delivery, outcome, () => log().child({ kind }));
      this.metrics?.processed(kind, settled);
      m.ack();
      return { jobId, kind, outcome: settled, ...('error' in outcome ? { error: outcome.error.code } : {}) };
    } catch (err) {
      return this.retry(m, err, { jobId, kind, delivery }, log);
    } finally {
      clearInterval(heartbeat);
      if (loaded && !('settled' in loaded)) loaded.stopMarking();
    }
  }

  /**
   * How much longer a sandbox:hold keeps the job unclaimed (0: not held), counted from the job's
   * creation (from its publication in a message that does not say when the job was created). Every
   * message the job service publishes carries the whole job, the outbox relay's too, so a job that
   * reached the stream late (NATS was down) is held as long as one published at once.
   */
  private heldFor(m: JsMsg, message: NonNullable<ReturnType<typeof parseJobMessage>>): number {
    if (this.config.environment !== 'uat' || !('caller' in message)) return 0;
    const holdS = sandboxHoldS(message.payload);
    if (!holdS) return 0;
    const createdMs = message.createdAt ? Date.parse(message.createdAt) : NaN;
    const fromMs = Number.isFinite(createdMs) ? createdMs : m.info.timestampNanos / 1e6;
    // At most the hold itself: the publish time's sub-millisecond part must not round it up past it.
    return Math.max(0, Math.min(holdS * 1000, Math.ceil(fromMs + holdS * 1000 - Date.now())));
  }

  /** Past the last delivery: the job fails (retryable: the partner may send the request again). */
  private async giveUp(m: JsMsg, jobId: string): Promise<DeliveryReport> {
    await this.settleFailed(jobId, {
      code: 'internal',
      message: `the job could not be processed after ${this.config.maxDeliveries} attempts; retry the request`,
      retryable: true,
    });
    this.metrics?.processed('unknown', 'failed');
    m.ack();
    return { jobId, kind: 'unknown', outcome: 'failed', error: 'failed after the maximum number of deliveries', gaveUp: true };
  }

  /**
   * The job to run, claimed for this delivery, or that it may not run: settled already (a redelivery
   * of a finished job) or cancelled. Nothing that changes data is called before the claim.
   */
  private async load(message: NonNullable<ReturnType<typeof parseJobMessage>>, delivery: number, log: () => Logger): Promise<Loaded> {
    const jobId = message.jobId;
    if ('caller' in message && this.config.claim) {
      // The message carries the whole job: claim it (with the claims of concurrent deliveries, in one
      // call and one statement) and start on the effect; no read of the job is needed.
      const claimed = await this.claims.call({ jobId, delivery });
      if (!claimed) return { settled: true, kind: message.kind };
      return { job: { id: jobId, kind: message.kind, caller: message.caller, createdAt: message.createdAt ?? '' }, payload: message.payload, stopMarking: () => undefined, marked: async () => undefined };
    }
    if (delivery === 1 && 'caller' in message) {
      // WORKER_CLAIM=off (bench only: the cost of the claim, measured): the first delivery runs
      // unclaimed and is marked running only if it outlasts runningAfterMs. Not safe against a cancel.
      let marked: Promise<void> | undefined;
      const mark = () => {
        marked = this.clients.job.StartJob({ jobId, delivery }).then(
          () => undefined,
          (err: unknown) => log().warn({ err: (err as Error).message }, 'could not mark the job running'),
        );
      };
      let timer: NodeJS.Timeout | undefined;
      if (this.config.runningAfterMs === 0) mark();
      else timer = setTimeout(mark, this.config.runningAfterMs);
      return {
        job: { id: jobId, kind: message.kind, caller: message.caller, createdAt: message.createdAt ?? '' },
        payload: message.payload,
        stopMarking: () => clearTimeout(timer),
        marked: async () => marked,
      };
    }
    // A message carrying the job id alone (an older version's relay or sweep published these; this
    // one's carry the whole job, repo.ts relayBody): StartJob claims the job (the same one
    // statement) and returns it with its payload; a settled or cancelled job comes back as it is, and
    // is skipped.
    const started = (await this.clients.job.StartJob({ jobId, delivery })).job;
    if (!started?.caller) throw new DomainError('internal', 'StartJob returned no job');
    const status = JOB_STATUS.fromProto(started.status);
    if (!status || isSettled({ status })) return { settled: true, kind: started.kind };
    return {
      job: { id: jobId, kind: started.kind, caller: started.caller, createdAt: started.createdAt },
      payload: JSON.parse(started.payloadJson) as unknown,
      stopMarking: () => undefined,
      marked: async () => undefined,
    };
  }

  /**
   * Runs the job's handler: its result, or the failure it settles with. Throws (for a later delivery)
   * what may pass: a dependency's transient failure, or any failure while the worker is stopping.
   */
  private async run(job: JobToRun, payload: unknown, log: () => Logger): Promise<Outcome> {
    const handler = Object.hasOwn(HANDLERS, job.kind) ? HANDLERS[job.kind] : undefined;
    try {
      if (!handler) throw new JobFailed({ code: 'internal', message: `no handler for job kind ${job.kind}`, retryable: false });
      const result = await handler(job, payload, {
        clients: this.clients,
        product: this.products,
        ratingPlans: this.ratingPlans,
        sandbox: this.config.environment === 'uat',
        sleep: this.sleep,
        advanceBatch: this.config.testClockAdvanceBatch,
      });
      this.afterEffect?.(job.id);
      return { resultJson: JSON.stringify(result) };
    } catch (err) {
      if (err instanceof JobFailed) return { error: err.error };
      // A failure that would recur on every delivery settles the job now (handler-contract.ts).
      const failure = this.abort.signal.aborted ? undefined : deterministicFailure(err);
      if (!failure) throw err;
      log().error({ err, kind: job.kind }, 'job failed on its own input; settled as failed at once');
      return { error: failure };
    }
  }

  /** Settles the job with the outcome; says so when another delivery had settled it the other way. */
  private async settle(jobId: string, delivery: number, outcome: Outcome, log: () => Logger): Promise<'succeeded' | 'failed'> {
    const reply = await this.clients.job.SettleJob({ jobId, delivery, ...outcome });
    const settled = 'resultJson' in outcome ? 'succeeded' : 'failed';
    if (!reply.settledNow && JOB_STATUS.fromProto(reply.job?.status ?? '') !== settled) {
      // Another delivery settled it the other way first (e.g. a message delivered again as new after
      // its consumer was recreated): this effect's outcome is not the job's. Say so, for follow-up.
      log().error({ settled: reply.job?.status, ran: settled }, 'job already settled with another outcome; this delivery ran it again');
    }
    return settled;
  }

  /** A delivery that did not settle its job: dropped when the job does not exist, else delivered again. */
  private retry(m: JsMsg, err: unknown, at: { jobId: string; kind: string; delivery: number }, log: () => Logger): DeliveryReport {
    const { jobId, kind } = at;
    // The job service has no such job (a database restored to before the message, a stream shared by
    // mistake): redelivering cannot help, so the message is dropped, loudly.
    if (err instanceof DomainError && err.code === 'not_found') {
      log().error('no such job in the job service; message terminated');
      m.term();
      return { jobId, kind, outcome: 'malformed', error: 'no such job' };
    }
    // A dependency failed (or the worker is stopping): deliver again later, or now to another worker.
    if (this.abort.signal.aborted) {
      m.nak();
      return { jobId, kind, outcome: 'retried', error: 'worker stopping', retryInMs: 0 };
    }
    const delay = this.backoff(at.delivery);
    this.metrics?.processed(kind, 'retried');
    m.nak(delay);
    return { jobId, kind, outcome: 'retried', error: (err as Error).message, retryInMs: delay };
  }

  /** Stops pulling, gives in-flight jobs graceMs to finish, then hands the rest back (nak). */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    await this.messages?.close().catch(() => undefined);
    const all = Promise.allSettled([...this.inflight]);
    const timer = setTimeout(() => this.abort.abort(), graceMs);
    await all;
    clearTimeout(timer);
  }
}
