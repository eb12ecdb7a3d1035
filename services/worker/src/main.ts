// Runs a worker process. Several may run; they share the durable consumer. Telemetry starts first and
// the application is imported only afterwards, so its modules load instrumented.
import { startTelemetry } from '@partner/shared/telemetry/bootstrap';

await startTelemetry('worker');
const { processMain } = await import('@partner/shared/process/run');
const { readWorkerConfig } = await import('./config.js');
const { startWorker } = await import('./app.js');

processMain({ readConfig: readWorkerConfig, start: (c, logger) => startWorker(c, { logger }) });
