// Builds the job service: gRPC JobService over the job schema (requests checked in requests.ts, data
// in repo.ts), the outbox relays to JetStream, settlement events on core NATS, its metrics
// (metrics.ts) and the periodic sweeps (sweeps.ts).
import { implement, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { isJobId } from '@partner/shared/domain/ids';
import { CANCELED_ERROR, jobMessageJson } from '@partner/shared/domain/jobs';
import { ensureJobsStream, natsNames, traceHeaders } from '@partner/shared/nats/client';
import { eventOutbox } from '@partner/shared/nats/event-outbox';
import { EVENT_OUTBOX_METRICS, OutboxRelay } from '@partner/shared/nats/outbox-relay';
import { context, contextCarrier, failSpan, SpanKind, trace, tracer } from '@partner/shared/telemetry/tracing';
import { dbError } from '@partner/shared/db/pg';
import { dbBatcher } from '@partner/shared/db/batcher';
import { startProcess, type RunningProcess, type StartOptions } from '@partner/shared/process/start';
import type { JobConfig } from './config.js';
import * as repo from './repo.js';
import { listJobs, loadJobCursorCodec, parseListJobs } from './list.js';
import { jobMetrics } from './metrics.js';
import { checkSubmit, settlementEvent, settleOutcomeOf } from './requests.js';
import { sweeps } from './sweeps.js';
import { MIGRATIONS_DIR, SCHEMA } from './schema.js';

export function startJob(config: JobConfig, opts: StartOptions = {}): Promise<RunningProcess> {
  const names = natsNames(config.natsPrefix);
  return startProcess({
    name: 'job',
    config,
    ...opts,
    db: { schema: SCHEMA, migrationsDir: MIGRATIONS_DIR },
    // NATS may be down at start: the service accepts jobs regardless (they wait in the outbox).
    nats: { connect: 'later' },
    build: async ({ pool, registry, logger, nats, every }) => {
      const metrics = jobMetrics(registry, pool);
      const cursors = await loadJobCursorCodec(pool).catch(dbError);
      const stream = { replicas: config.streamReplicas, duplicateWindowMs: config.duplicateWindowMs };
      const relay = new OutboxRelay(
        pool,
        {
          table: 'outbox',
          columns: repo.OUTBOX_RELAY_COLUMNS,
          bodyOf: repo.relayBody,
          streamName: names.jobsStream,
          ensureStream: (jsm) => ensureJobsStream(jsm, names, { ...stream, owner: true }),
        },
        { intervalMs: config.relayIntervalMs, logger, metrics: { published: metrics.published, failed: metrics.publishFailed } },
      );
      relay.start();
      // Settlement events (job.succeeded/job.failed) go to the events stream through their own outbox.
      const eventRelay = new OutboxRelay(pool, eventOutbox(names, stream), {
        intervalMs: config.relayIntervalMs,
        logger,
        gauges: { registry, prefix: EVENT_OUTBOX_METRICS },
      });
      eventRelay.start();

      nats.onConnect((conn) => {
        relay.attach(conn);
        eventRelay.attach(conn);
      });

      /** Best effort: a waiting gateway that misses this re-reads the job at its deadline. */
      const publishSettlement = (row: repo.JobRow) => {
        const span = tracer().startSpan(`send ${names.settledSubject}`, {
          kind: SpanKind.PRODUCER,
          attributes: { 'messaging.system': 'nats', 'messaging.operation.type': 'send', 'messaging.destination.name': names.settledSubject },
        });
        try {
          const headers = traceHeaders(trace.setSpan(context.active(), span));
          nats.current?.publish(names.settledSubject, JSON.stringify(settlementEvent(row)), headers ? { headers } : {});
        } catch (err) {
          failSpan(span, err);
          logger.warn({ err: (err as Error).message, jobId: row.job_id }, 'settlement event not published');
        } finally {
          span.end();
        }
      };

      // SubmitJob and SettleJob commit concurrent calls together (shared/db/batcher.ts): a lone call
      // runs alone, at once; calls that arrive while DB_BATCH_IN_FLIGHT statements run share the next.
      const submits = dbBatcher('SubmitJob', (inputs: repo.SubmitInput[]) => repo.insertJobs(pool, inputs), {
        config,
        registry,
        keyOf: repo.submitBatchKey,
      });
      const settles = dbBatcher('SettleJob', (inputs: repo.SettleInput[]) => repo.settleJobs(pool, names, inputs), {
        config,
        registry,
        keyOf: (i) => i.jobId,
      });

      for (const loop of sweeps({ pool, config, names, logger, nats: () => nats.current, requeued: () => relay.kick() })) every(loop);

      const impl = implement(
        serviceDefs().job,
        {
          SubmitJob: async (req) => {
            const { caller, idempotency } = checkSubmit(req);
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
              ...(idempotency ? { idempotency } : {}),
              retentionHours: config.idempotencyRetentionHours,
              traceContext: contextCarrier(),
            }, (input) => submits.call(input));
            if (out.outboxId) {
              metrics.accepted(req.kind);
              relay.publishNow(out.outboxId, { msgId: req.jobId, subject, body: jobMessageJson(req.jobId, req.kind, caller, req.payloadJson, out.row.created_at) });
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
            const outcome = settleOutcomeOf(req);
            const out = await repo.settleJob(pool, names, req.jobId, outcome, req.delivery, (input) => settles.call(input)).catch(dbError);
            if (!out) throw notFound('job');
            if (out.event) eventRelay.publishNow(out.event.outboxId, out.event);
            if (out.settledNow) {
              // The event first: waiting requests are answered before the rest of this reply is built.
              publishSettlement(out.row);
              metrics.settled(out.row.kind, out.row.status, (out.row.updated_at.getTime() - out.row.created_at.getTime()) / 1000);
            }
            return { job: repo.toProto(out.row), settledNow: out.settledNow };
          },
          ClaimJobs: async (req) => {
            const items = req.items.filter((i) => isJobId(i.jobId)).map((i) => ({ jobId: i.jobId, delivery: i.delivery }));
            const claimed = items.length ? await repo.claimJobs(pool, items, { asyncCommit: config.claimAsyncCommit }).catch(dbError) : new Set<string>();
            return { claimed: req.items.map((i) => claimed.has(i.jobId)) };
          },
          CancelJob: async (req) => {
            if (!isJobId(req.jobId) || !req.tenantId || !req.partnerId) throw notFound('job');
            const owner = { tenantId: req.tenantId, partnerId: req.partnerId };
            const out = await repo.cancelJob(pool, names, req.jobId, owner, CANCELED_ERROR).catch(dbError);
            if (!out) throw notFound('job');
            if (out.row.status !== 'canceled') {
              throw new DomainError('job_not_cancelable', `the job has ${out.row.status === 'running' ? 'started' : out.row.status}; it can no longer be cancelled (read the job for its outcome)`);
            }
            if (out.event) eventRelay.publishNow(out.event.outboxId, out.event);
            if (out.canceledNow) {
              // Like a settlement: waiting requests are answered at once.
              publishSettlement(out.row);
              metrics.settled(out.row.kind, 'canceled', (out.row.updated_at.getTime() - out.row.created_at.getTime()) / 1000);
            }
            return { job: repo.toProto(out.row), canceledNow: out.canceledNow };
          },
        },
        logger,
        { registry },
      );

      return {
        grpc: [{ name: SERVICE_NAMES.job, def: serviceDefs().job, impl }],
        stop: async () => {
          await relay.stop();
          await eventRelay.stop();
        },
      };
    },
  });
}
