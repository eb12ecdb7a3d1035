// An HTTP listener of a process besides its ops listener (the gateway's public port, auth's token
// server), with the drain every one of them gets: on close it stops accepting, answers in flight
// finish, connections are closed as they go idle, and those still open when the drain budget
// (SHUTDOWN_DRAIN_MS) is spent are cut.
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Logger } from '../telemetry/logger.js';

/** A listener startProcess drains on shutdown; its port is announced under `name`. */
export interface Listener {
  name: string;
  port: number;
  /** Stops accepting and lets requests in flight finish within drainMs. */
  close(drainMs: number): Promise<void>;
}

export async function listenHttp(opts: {
  name: string;
  host: string;
  port: number;
  options: ServerOptions;
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  logger: Logger;
  /** Runs when the drain starts (the gateway answers its waiting requests now). */
  onDrain?: () => void;
  configure?: (server: Server) => void;
}): Promise<Listener> {
  const server: Server = createServer(opts.options, opts.handle);
  opts.configure?.(server);
  server.listen(opts.port, opts.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return {
    name: opts.name,
    port: (server.address() as { port: number }).port,
    close: async (drainMs) => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      opts.onDrain?.();
      server.closeIdleConnections();
      const idle = setInterval(() => server.closeIdleConnections(), 250);
      const force = setTimeout(() => {
        opts.logger.warn({ listener: opts.name }, 'drain budget spent; closing the connections still open');
        server.closeAllConnections();
      }, drainMs);
      await closed;
      clearInterval(idle);
      clearTimeout(force);
    },
  };
}
