// The outbox relay: puts committed jobs on the JetStream work queue. The fast path publishes a job
// right after its transaction commits; the loop publishes whatever the fast path could not (NATS
// down, process died between commit and publish). Every publish carries Nats-Msg-Id = job id, so a
// job published twice within the stream's duplicate window is stored once (and the worker's effects
// are idempotent by job id beyond it). Each publish is a PRODUCER span whose context travels in the
// message headers to the worker: the fast path's parent is the SubmitJob call; the loop's is the
// context recorded with the outbox row, so a job published late still continues its request's trace.
// The fast path's message carries the whole job (kind, caller, payload), so its first delivery needs
// no read; the loop's carries the job id alone, so the worker reads the job first and skips it if it
// has settled meanwhile (a row can outlive the message it was already published as, and JetStream's
// duplicate window). The fast path's outbox rows are deleted in batches: a row left by a crash is
// published again by the loop, and JetStream drops it as a duplicate.
import type { JetStreamClient, NatsConnection, PubAck } from 'nats';
import type { Logger } from '@partner/shared/logger';
import type { Pool } from '@partner/shared/pg';
import { ensureJobsStream, natsNames, traceHeaders } from '@partner/shared/nats';
import { context, extractContext, inSpan, SpanKind, type Context } from '@partner/shared/tracing';
import { deleteOutbox, type OutboxRow } from './repo.js';

/** A job to publish: its message body and the trace context its PRODUCER span continues. */
interface Outgoing {
  jobId: string;
  subject: string;
  body: string;
  parent: Context;
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

export class OutboxRelay {
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private streamReady: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private stopped = false;
  /** Fast-path publishes awaiting their acknowledgement. */
  private readonly publishing = new Set<Promise<void>>();
  /** Outbox rows of jobs the fast path published, to delete in the next batch. */
  private published: string[] = [];
  private deleteTimer: NodeJS.Timeout | undefined;
  private deleting: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    private readonly names: ReturnType<typeof natsNames>,
    private readonly opts: { replicas: number; duplicateWindowMs: number; intervalMs: number; logger: Logger; metrics?: RelayMetrics },
  ) {}

  /** Called once NATS is connected (possibly long after start). */
  attach(nc: NatsConnection): void {
    this.nc = nc;
    // JetStream API calls fail fast (default 5 s): right after a NATS restart they may hang until
    // JetStream is back, and the outbox keeps every job, so retrying soon beats waiting.
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

  /** Creates the work-queue stream, or updates it, once per process (again after it vanished). */
  private ensureStream(): Promise<void> {
    this.streamReady ??= (async () => {
      if (!this.nc) throw new Error('NATS not connected yet');
      await ensureJobsStream(await this.nc.jetstreamManager({ timeout: 1_500 }), this.names, {
        replicas: this.opts.replicas,
        duplicateWindowMs: this.opts.duplicateWindowMs,
        owner: true,
      });
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
      'messaging.message.id': job.jobId,
    };
    return inSpan(`send ${job.subject}`, { kind: SpanKind.PRODUCER, parent: job.parent, attributes }, () =>
      js.publish(job.subject, job.body, {
        msgID: job.jobId,
        expect: { streamName: this.names.jobsStream },
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

  /** Fast path after a commit: publish this job now; the loop retries if this fails. */
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
          this.opts.logger.warn({ jobId: job.jobId, err: (err as Error).message }, 'job not published yet; the outbox relay will retry');
        },
      )
      .finally(() => this.publishing.delete(p));
    this.publishing.add(p);
  }

  /**
   * Deletes the outbox rows of the jobs the fast path published, one statement for all of them.
   * Rows a failed delete leaves behind are published again by the loop; JetStream drops the
   * duplicates by their message ids.
   */
  private deletePublished(): Promise<void> {
    clearTimeout(this.deleteTimer);
    this.deleteTimer = undefined;
    const ids = this.published;
    this.published = [];
    this.deleting = this.deleting.then(() =>
      deleteOutbox(this.pool, ids).catch((err: unknown) =>
        this.opts.logger.warn({ jobs: ids.length, err: (err as Error).message }, 'published jobs still in the outbox'),
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
          await client.query<OutboxRow>(
            `SELECT id, job_id, subject, trace_context FROM outbox
              WHERE created_at < now() - interval '1 second'
              ORDER BY id LIMIT 200 FOR UPDATE SKIP LOCKED`,
          )
        ).rows;
        if (rows.length > 0) {
          await this.publish(
            rows.map((r) => ({ jobId: r.job_id, subject: r.subject, body: JSON.stringify({ jobId: r.job_id }), parent: carrierContext(r.trace_context) })),
          );
          await client.query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
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
