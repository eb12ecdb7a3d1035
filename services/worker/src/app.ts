// Builds a worker process: gRPC clients, the JetStream consumer, the ops listener (readiness: NATS
// and the gRPC services the jobs call; metrics: concurrency, outcomes, the consumer's backlog).
import { Counter, Gauge } from 'prom-client';
import type { NatsConnection } from 'nats';
import { createClient, grpcReadiness, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { createLogger, type Logger } from '@partner/shared/logger';
import { connectNats, natsNames, natsReadiness } from '@partner/shared/nats';
import { createRegistry, startOpsServer } from '@partner/shared/ops';
import { metricSourceFailures } from '@partner/shared/metric-sources';
import { JOB_KINDS } from '@partner/shared/jobs';
import type { WorkerConfig } from './config.js';
import { JobConsumer } from './consumer.js';

export interface WorkerService {
  ports: { ops: number };
  stop(): Promise<void>;
}

export async function startWorker(config: WorkerConfig, opts: { logger?: Logger } = {}): Promise<WorkerService> {
  const logger = opts.logger ?? createLogger('worker', config.logLevel);
  const defs = serviceDefs();
  const registry = createRegistry('worker');
  const clients = {
    job: createClient(defs.job, config.grpc.job, config.grpcTimeoutMs, { registry, callStreams: config.grpcCallStreams }),
    submission: createClient(defs.submission, config.grpc.submission, config.grpcTimeoutMs, { registry, callStreams: config.grpcCallStreams }),
    policy: createClient(defs.policy, config.grpc.policy, config.grpcTimeoutMs, { registry, callStreams: config.grpcCallStreams }),
    events: createClient(defs.events, config.grpc.events, config.grpcTimeoutMs, { registry, callStreams: config.grpcCallStreams }),
  };
  const inUse = new Gauge({ name: 'partner_worker_concurrency_in_use', help: 'Jobs being processed by this worker.', registers: [registry] });
  new Gauge({
    name: 'partner_worker_concurrency_limit',
    help: 'Jobs this worker processes at once at most.',
    registers: [registry],
  }).set(config.concurrency);
  const processed = new Counter({
    name: 'partner_worker_jobs_processed_total',
    help: 'Job deliveries handled, by kind and outcome (succeeded, failed, retried, skipped).',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  });

  for (const kind of Object.values(JOB_KINDS)) for (const outcome of ['succeeded', 'failed', 'retried', 'skipped']) processed.inc({ kind, outcome }, 0);

  const nc = await connectNats({ url: config.natsUrl, name: 'worker', logger });
  consumerGauges(registry, nc, natsNames(config.natsPrefix));
  const consumer = new JobConsumer(
    nc,
    config,
    clients,
    logger,
    {
      inUse: (d) => inUse.inc(d),
      processed: (kind, outcome) => processed.inc({ kind, outcome }),
    },
    // WORKER_TEST_FAULT=exit-after-effect (test/faults.test.ts): die between a job's effect and its
    // settlement, to prove the redelivery settles it once with that same effect.
    config.testFault === 'exit-after-effect'
      ? (jobId) => {
          logger.warn({ jobId }, 'WORKER_TEST_FAULT: exiting after the effect, before settling and acking');
          process.exit(86);
        }
      : undefined,
  );
  await consumer.start();

  const ops = await startOpsServer({
    host: config.host,
    port: config.opsPort,
    registry,
    checks: {
      nats: natsReadiness(nc),
      job: grpcReadiness(clients.job, SERVICE_NAMES.job),
      submission: grpcReadiness(clients.submission, SERVICE_NAMES.submission),
      policy: grpcReadiness(clients.policy, SERVICE_NAMES.policy),
      events: grpcReadiness(clients.events, SERVICE_NAMES.events),
    },
    // A consume loop that died and cannot be restarted makes the process not live (restarted).
    liveness: { consumer: () => consumer.wedged() },
  });

  return {
    ports: { ops: ops.port },
    stop: async () => {
      ops.setDraining();
      await consumer.stop(config.drainMs);
      await nc.drain().catch(() => undefined);
      for (const c of Object.values(clients)) c.close();
      await ops.close();
    },
  };
}

/**
 * The shared durable consumer's state, read from JetStream at scrape time: messages not yet
 * delivered, delivered but unacknowledged, and redelivered. Every worker reports the same consumer
 * (aggregate with max, not sum). NaN (and partner_metric_source_failures_total counted) when
 * JetStream does not answer within a second: never the last value as if it were current.
 */
function consumerGauges(registry: ReturnType<typeof createRegistry>, nc: NatsConnection, names: ReturnType<typeof natsNames>): void {
  const sourceFailed = metricSourceFailures(registry, ['partner_worker_consumer_pending']);
  let info: Promise<{ num_pending: number; num_ack_pending: number; num_redelivered: number } | undefined> | undefined;
  // One consumer-info request per scrape, shared by the three gauges.
  const read = () => {
    info ??= (async () => {
      if (nc.isClosed()) return undefined;
      const jsm = await nc.jetstreamManager({ timeout: 1_000, checkAPI: false });
      return jsm.consumers.info(names.jobsStream, names.workerConsumer);
    })()
      .catch(() => {
        sourceFailed('partner_worker_consumer_pending');
        return undefined;
      })
      .finally(() => setTimeout(() => (info = undefined), 100));
    return info;
  };
  const gauge = (name: string, help: string, pick: (i: { num_pending: number; num_ack_pending: number; num_redelivered: number }) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const i = await read();
        this.set(i ? pick(i) : Number.NaN);
      },
    });
  gauge('partner_worker_consumer_pending', 'Jobs in JetStream not yet delivered to any worker (the shared consumer).', (i) => i.num_pending);
  gauge('partner_worker_consumer_ack_pending', 'Jobs delivered to a worker and not yet acknowledged.', (i) => i.num_ack_pending);
  gauge('partner_worker_consumer_redelivered', 'Jobs delivered more than once and not yet acknowledged.', (i) => i.num_redelivered);
}
