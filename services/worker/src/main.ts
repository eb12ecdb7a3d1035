// Runs a worker process. Several may run; they share the durable consumer. Telemetry starts first and
// the application is imported only afterwards, so its modules load instrumented.
import { startTelemetry } from '@partner/shared/telemetry';

await startTelemetry('worker');
const { createLogger } = await import('@partner/shared/logger');
const { announceReady, main, runUntilSignalled } = await import('@partner/shared/lifecycle');
const { readWorkerConfig } = await import('./config.js');
const { startWorker } = await import('./app.js');

main(async () => {
  const config = readWorkerConfig();
  const logger = createLogger('worker', config.logLevel);
  const service = await startWorker(config, { logger });
  announceReady(logger, service.ports);
  runUntilSignalled(service, logger, config.drainMs);
});
