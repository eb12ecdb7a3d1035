// Builds a worker process: gRPC clients, the JetStream consumer, the ops listener.
import { Counter, Gauge } from 'prom-client';
import { createClient, serviceDefs } from '@partner/shared/grpc';
import { createLogger, type Logger } from '@partner/shared/logger';
import { connectNats } from '@partner/shared/nats';
import { createRegistry, startOpsServer } from '@partner/shared/ops';
import type { WorkerConfig } from './config.js';
import { JobConsumer } from './consumer.js';

export interface WorkerService {
  ports: { ops: number };
  stop(): Promise<void>;
}

export async function startWorker(config: WorkerConfig, opts: { logger?: Logger } = {}): Promise<WorkerService> {
  const logger = opts.logger ?? createLogger('worker', config.logLevel);
  const defs = serviceDefs();
  const clients = {
    job: createClient(defs.job, config.grpc.job, config.grpcTimeoutMs),
    submission: createClient(defs.submission, config.grpc.submission, config.grpcTimeoutMs),
    policy: createClient(defs.policy, config.grpc.policy, config.grpcTimeoutMs),
  };
  const registry = createRegistry('worker');
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

  const nc = await connectNats({ url: config.natsUrl, name: 'worker', logger });
  const consumer = new JobConsumer(nc, config, clients, logger, {
    inUse: (d) => inUse.inc(d),
    processed: (kind, outcome) => processed.inc({ kind, outcome }),
  });
  await consumer.start();

  const ops = await startOpsServer({
    host: config.host,
    port: config.opsPort,
    registry,
    checks: {
      nats: async () => {
        if (nc.isClosed()) throw new Error('closed');
        await nc.flush();
      },
    },
  });

  return {
    ports: { ops: ops.port },
    stop: async () => {
      ops.setDraining();
      await consumer.stop();
      await nc.drain().catch(() => undefined);
      for (const c of Object.values(clients)) c.close();
      await ops.close();
    },
  };
}
