// Runs the gateway. Telemetry starts first and the application is imported only afterwards, so its
// modules load instrumented.
import { startTelemetry } from '@partner/shared/telemetry/bootstrap';

await startTelemetry('gateway');
const { processMain } = await import('@partner/shared/process/run');
const { readGatewayConfig } = await import('./config.js');
const { startGateway } = await import('./app.js');

processMain({ readConfig: readGatewayConfig, start: (c, logger) => startGateway(c, { logger }) });
