// Runs the gateway.
import { createLogger } from '@partner/shared/logger';
import { announceReady, main, runUntilSignalled } from '@partner/shared/lifecycle';
import { readGatewayConfig } from './config.js';
import { startGateway } from './app.js';

main(async () => {
  const config = readGatewayConfig();
  const logger = createLogger('gateway', config.logLevel);
  const service = await startGateway(config, { logger });
  announceReady(logger, service.ports);
  runUntilSignalled(service, logger);
});
