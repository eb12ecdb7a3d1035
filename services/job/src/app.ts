// Builds the job service: gRPC JobService over the job schema, the outbox relay to JetStream,
// settlement events on core NATS, and the periodic sweeps (expired idempotency keys, stale jobs).
import { fileURLToPath } from 'node:url';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { NatsConnection } from 'nats';
import { implement, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { DomainError, notFound } from '@partner/shared/errors';
import { isJobId } from '@partner/shared/ids';
import { JOB_KINDS, jobMessageJson, type SettlementEvent } from '@partner/shared/jobs';
import { connectNats, ensureJobsStream, natsNames, traceHeaders } from '@partner/shared/nats';
import { eventOutbox } from '@partner/shared/events';
import { OutboxRelay } from '@partner/shared/outbox-relay';
import { context, contextCarrier, failSpan, SpanKind, trace, tracer } from '@partner/shared/tracing';
import { dbError } from '@partner/shared/pg';
import type { Logger } from '@partner/shared/logger';
import { startGrpcService, type RunningService } from '@partner/shared/service';
import type { JobConfig } from './config.js';
import * as repo from './repo.js';
import { listJobs, loadJobCursorCodec, parseListJobs } from './list.js';
import { metricSourceFailures } from '@partner/shared/metric-sources';

export const SCHEMA = 'job';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
const KINDS = new Set<string>(Object.values(JOB_KINDS));

export function startJob(config: JobConfig, opts: { logger?: Logger; migrate?: boolean } = {}): Promise<RunningService> {
  const names = natsNames(config.natsPrefix);
  return startGrpcService({
    config,
    schema: SCHEMA,
    migrationsDir: MIGRATIONS_DIR,
    ...opts,
    build: async ({ pool, registry, logger }) => {
      const accepted = new Counter({ name: 'partner_jobs_accepted_total', help: 'Jobs accepted, by kind.', labelNames: ['kind'], registers: [registry] });
      const settled = new Counter({
        name: 'partner_jobs_settled_total',
        help: 'Jobs settled, by kind and outcome (succeeded/failed).',
        labelNames: ['kind', 'outcome'],
        registers: [registry],
      });
      // Pre-initialised: the accepted-vs-settled panels and alerts see every kind from the first scrape.
      for (const kind of Object.values(JOB_KINDS)) {
        accepted.inc({ kind }, 0);
        for (const outcome of ['succeeded', 'failed']) settled.inc({ kind, outcome }, 0);
      }
      const settleLatency = new Histogram({
        name: 'partner_job_settle_latency_seconds',
        help: 'Time from a job being accepted to its settlement, by kind.',
        labelNames: ['kind'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
        registers: [registry],
      });
      const published = new Counter({ name: 'partner_job_outbox_published_total', help: 'Jobs published to JetStream.', registers: [registry] });
      const publishFailures = new Counter({
        name: 'partner_job_outbox_publish_failures_total',
        help: 'Failed attempts to publish outbox rows (retried).',
        registers: [registry],
      });
      // One outbox query per scrape for both gauges; a failed read marks them NaN and is counted.
      const sourceFailed = metricSourceFailures(registry, ['partner_job_outbox_backlog']);
      let outboxRead: Promise<{ n: number; age: number } | undefined> | undefined;
      const readOutbox = () =>
        (outboxRead ??= pool
          .query<{ n: string; age: string | null }>('SELECT count(*) AS n, extract(epoch FROM now() - min(created_at)) AS age FROM outbox')
          .then((r) => ({ n: Number(r.rows[0]?.n ?? 0), age: Number(r.rows[0]?.age ?? 0) }))
          .catch(() => {
            sourceFailed('partner_job_outbox_backlog');
            return undefined;
          })
          .finally(() => setTimeout(() => (outboxRead = undefined), 100)));
      new Gauge({
        name: 'partner_job_outbox_backlog',
        help: 'Jobs committed but not yet published to JetStream (NaN when the count failed).',
        registers: [registry],
        async collect() {
          const r = await readOutbox();
          this.set(r ? r.n : Number.NaN);
        },
      });
      new Gauge({
        name: 'partner_job_outbox_oldest_age_seconds',
        help: 'Age of the oldest job waiting in the outbox (0 when empty; NaN when the read failed).',
        registers: [registry],
        async collect() {
          const r = await readOutbox();
          this.set(r ? r.age : Number.NaN);
        },
      });

      const cursors = await loadJobCursorCodec(pool).catch(dbError);
      const stream = { replicas: config.streamReplicas, duplicateWindowMs: config.duplicateWindowMs };
      const relay = new OutboxRelay(
        pool,
        {
          table: 'outbox',
          // A row the loop publishes carries the job id alone: the worker reads the job first.
          columns: `id, job_id AS msg_id, subject, json_build_object('jobId', job_id)::text AS body, trace_context`,
          streamName: names.jobsStream,
          ensureStream: (jsm) => ensureJobsStream(jsm, names, { ...stream, owner: true }),
        },
        {
          intervalMs: config.relayIntervalMs,
          logger,
          metrics: { published: (n) => published.inc(n), failed: () => publishFailures.inc() },
        },
      );
      relay.start();
      // Settlement events (job.succeeded/job.failed) go to the events stream through their own outbox.
      const eventRelay = new OutboxRelay(pool, eventOutbox(names, stream), { intervalMs: config.relayIntervalMs, logger });
      eventRelay.start();

      // NATS may be down at start: the service accepts jobs regardless (they wait in the outbox).
      let nc: NatsConnection | undefined;
      let stopped = false;
      const connecting = connectNats({ url: config.natsUrl, name: 'job', logger }).then((conn) => {
        if (stopped) return conn.close();
        nc = conn;
        relay.attach(conn);
        eventRelay.attach(conn);
      });
      connecting.catch((err: unknown) => logger.error({ err }, 'NATS connection failed'));

      const publishSettlement = (row: repo.JobRow) => {
        const event: SettlementEvent = {
          job: {
            id: row.job_id,
            kind: row.kind,
            status: row.status,
            ...(row.status === 'succeeded' ? { result: row.result } : {}),
            ...(row.status === 'failed' && row.error ? { error: row.error } : {}),
            createdAt: row.created_at.toISOString(),
            updatedAt: row.updated_at.toISOString(),
          },
          tenantId: row.tenant_id,
          partnerId: row.partner_id,
        };
        // Best effort: a waiting gateway that misses this re-reads the job at its deadline.
        const span = tracer().startSpan(`send ${names.settledSubject}`, {
          kind: SpanKind.PRODUCER,
          attributes: { 'messaging.system': 'nats', 'messaging.operation.type': 'send', 'messaging.destination.name': names.settledSubject },
        });
        try {
          const headers = traceHeaders(trace.setSpan(context.active(), span));
          nc?.publish(names.settledSubject, JSON.stringify(event), headers ? { headers } : {});
        } catch (err) {
          failSpan(span, err);
          logger.warn({ err: (err as Error).message, jobId: row.job_id }, 'settlement event not published');
        } finally {
          span.end();
        }
      };

      const queueIsEmpty = async (): Promise<boolean> => {
        if (!nc || nc.isClosed()) return false;
        const info = await (await nc.jetstreamManager({ timeout: 1_500 })).streams.info(names.jobsStream);
        return info.state.messages === 0;
      };

      const sweep = setInterval(() => {
        void repo
          .sweepIdempotencyKeys(pool)
          .then((n) => n && logger.info({ removed: n }, 'expired idempotency keys removed'))
          .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'idempotency sweep failed'));
        // A stale job's message may simply be waiting (workers down, a backlog): only when the work
        // queue is empty is a stale job's message known to be lost, and only then is it queued again.
        void queueIsEmpty()
          .then((empty) => (empty ? repo.requeueStaleJobs(pool, config.staleJobAfterMs, names.jobSubject) : 0))
          .then((n) => {
            if (n) {
              logger.warn({ requeued: n }, 'stale unsettled jobs queued again');
              relay.kick();
            }
          })
          .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'stale-job sweep failed'));
      }, config.sweepIntervalMs);

      const impl = implement(
        serviceDefs().job,
        {
          SubmitJob: async (req) => {
            const caller = req.caller;
            if (!isJobId(req.jobId)) throw new DomainError('validation_error', 'job_id must be job_<32 hex>');
            if (!KINDS.has(req.kind)) throw new DomainError('validation_error', `unknown job kind ${req.kind}`);
            if (!caller?.tenantId || !caller.partnerId || !caller.clientId) throw new DomainError('validation_error', 'caller is required');
            try {
              JSON.parse(req.payloadJson);
            } catch {
              throw new DomainError('validation_error', 'payload_json is not JSON');
            }
            const idem = req.idempotency?.key ? req.idempotency : undefined;
            const subject = names.jobSubject(req.kind);
            const out = await repo.submitJob(pool, {
              jobId: req.jobId,
              kind: req.kind,
              subject,
              tenantId: caller.tenantId,
              partnerId: caller.partnerId,
              clientId: caller.clientId,
              principalId: caller.principalId || null,
              payloadJson: req.payloadJson,
              ...(idem ? { idempotency: { key: idem.key, scope: idem.scope, fingerprint: idem.fingerprint } } : {}),
              retentionHours: config.idempotencyRetentionHours,
              traceContext: contextCarrier(),
            });
            if (out.outboxId) {
              accepted.inc({ kind: req.kind });
              const jobCaller = { tenantId: caller.tenantId, partnerId: caller.partnerId, clientId: caller.clientId, principalId: caller.principalId };
              relay.publishNow(out.outboxId, { msgId: req.jobId, subject, body: jobMessageJson(req.jobId, req.kind, jobCaller, req.payloadJson) });
            }
            return { job: repo.toProto(out.row), replayed: out.replayed };
          },
          GetJob: async (req) => {
            const row = isJobId(req.jobId)
              ? await repo.getJob(pool, req.jobId, { tenantId: req.tenantId, partnerId: req.partnerId }).catch(dbError)
              : undefined;
            if (!row) throw notFound('job');
            return { job: repo.toProto(row) };
          },
          ListJobs: async (req) => {
            const page = await listJobs(pool, parseListJobs(req, cursors), cursors).catch(dbError);
            return { jobs: page.rows.map((r) => repo.toProto(r)), nextPageToken: page.nextCursor };
          },
          StartJob: async (req) => {
            const row = isJobId(req.jobId) ? await repo.startJob(pool, req.jobId, req.delivery).catch(dbError) : undefined;
            if (!row) throw notFound('job');
            return { job: repo.toProto(row, true) };
          },
          SettleJob: async (req) => {
            if (!isJobId(req.jobId)) throw notFound('job');
            let outcome: { resultJson: string } | { error: { code: string; message: string; retryable: boolean } };
            if (req.outcome === 'resultJson') {
              try {
                JSON.parse(req.resultJson ?? '');
                outcome = { resultJson: req.resultJson! };
              } catch {
                throw new DomainError('validation_error', 'result_json is not JSON');
              }
            } else if (req.outcome === 'error' && req.error?.code) {
              outcome = { error: req.error };
            } else {
              throw new DomainError('validation_error', 'a result or an error is required');
            }
            const out = await repo.settleJob(pool, names, req.jobId, outcome, req.delivery).catch(dbError);
            if (!out) throw notFound('job');
            if (out.event) eventRelay.publishNow(out.event.outboxId, out.event);
            if (out.settledNow) {
              // The event first: waiting requests are answered before the rest of this reply is built.
              publishSettlement(out.row);
              settled.inc({ kind: out.row.kind, outcome: out.row.status });
              settleLatency.observe({ kind: out.row.kind }, (out.row.updated_at.getTime() - out.row.created_at.getTime()) / 1000);
            }
            return { job: repo.toProto(out.row), settledNow: out.settledNow };
          },
        },
        logger,
        { registry },
      );

      return {
        bindings: [{ name: SERVICE_NAMES.job, def: serviceDefs().job, impl }],
        // No NATS readiness check on purpose: without NATS this service still accepts jobs, which
        // wait in the outbox until NATS returns. Only PostgreSQL (checked by the runner) is vital.
        stop: async () => {
          stopped = true;
          clearInterval(sweep);
          await relay.stop();
          await eventRelay.stop();
          await nc?.drain().catch(() => undefined);
        },
      };
    },
  });
}
