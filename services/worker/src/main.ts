// Runs a worker process. Several may run; they share the durable consumer.
import { createLogger } from '@partner/shared/logger';
import { announceReady, main, runUntilSignalled } from '@partner/shared/lifecycle';
import { readWorkerConfig } from './config.js';
import { startWorker } from './app.js';

main(async () => {
  const config = readWorkerConfig();
  const logger = createLogger('worker', config.logLevel);
  const service = await startWorker(config, { logger });
  announceReady(logger, service.ports);
  runUntilSignalled(service, logger);
});
