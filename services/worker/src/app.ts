// Builds a worker process on the shared start-up (startProcess): gRPC clients (the services the
// registry says it calls), the JetStream consumer, the ops listener (ready once started, like every
// process; liveness: the consume loop; metrics in metrics.ts: concurrency, outcomes, the consumer's
// backlog). NATS and the services the jobs call are reported on /readyz's body, not gating it.
import type { Logger } from '@partner/shared/telemetry/logger';
import { natsNames } from '@partner/shared/nats/client';
import { startProcess } from '@partner/shared/process/start';
import type { WorkerConfig } from './config.js';
import { JobConsumer } from './consumer.js';
import { consumerGauges, workerMetrics } from './metrics.js';

export interface WorkerService {
  ports: { ops: number };
  stop(): Promise<void>;
}

export async function startWorker(config: WorkerConfig, opts: { logger?: Logger } = {}): Promise<WorkerService> {
  const running = await startProcess({
    name: 'worker',
    config,
    logger: opts.logger,
    clients: { config },
    // Its work arrives over NATS: the start waits for the connection.
    nats: { connect: 'first' },
    build: async ({ registry, logger, clients, nats }) => {
      const nc = nats.current!;
      consumerGauges(registry, nc, natsNames(config.natsPrefix));
      const consumer = new JobConsumer(
        nc,
        config,
        clients,
        logger,
        workerMetrics(registry, config.concurrency),
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
      return {
        // A consume loop that died and cannot be restarted makes the process not live (restarted).
        liveness: { consumer: () => consumer.wedged() },
        stop: () => consumer.stop(config.drainMs),
      };
    },
  });
  return { ports: { ops: running.ports.ops! }, stop: running.stop };
}
