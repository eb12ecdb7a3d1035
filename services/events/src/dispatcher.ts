// Runs a webhook dispatcher process (the events package's second entry point; several may run).
// Telemetry starts first and the application is imported only afterwards, so its modules load
// instrumented.
import { startTelemetry } from '@partner/shared/telemetry/bootstrap';

await startTelemetry('dispatcher');
const { processMain } = await import('@partner/shared/process/run');
const { readDispatcherConfig } = await import('./dispatcher/config.js');
const { startDispatcher } = await import('./dispatcher/app.js');

processMain({ readConfig: readDispatcherConfig, start: (c, logger) => startDispatcher(c, { logger }) });
