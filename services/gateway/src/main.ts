// Runs the gateway. Telemetry starts first and the application is imported only afterwards, so its
// modules load instrumented.
import { startTelemetry } from '@partner/shared/telemetry';

await startTelemetry('gateway');
const { createLogger } = await import('@partner/shared/logger');
const { announceReady, main, runUntilSignalled } = await import('@partner/shared/lifecycle');
const { readGatewayConfig } = await import('./config.js');
const { startGateway } = await import('./app.js');

main(async () => {
  const config = readGatewayConfig();
  const logger = createLogger('gateway', config.logLevel);
  const service = await startGateway(config, { logger });
  announceReady(logger, service.ports);
  runUntilSignalled(service, logger, config.drainMs);
});
