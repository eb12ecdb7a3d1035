// A process's NATS connection, made by startProcess in one of two ways. `later` (every service that can
// serve without NATS): the process starts and accepts work at once — jobs and events wait in their
// outbox, waits end at their deadline — and whatever needs the connection attaches itself when it
// comes (onConnect). `first` (the worker, whose only work arrives over NATS): the start waits for it.
// Either way the connection reconnects forever, and startProcess drains it on shutdown.
import type { NatsConnection } from 'nats';
import type { Logger } from '../telemetry/logger.js';
import { connectNats, natsReadiness } from '../nats/client.js';
import type { DependencyCheck } from '../http/ops-server.js';

export interface ProcessNats {
  /** The connection once there is one. */
  readonly current: NatsConnection | undefined;
  /** Runs `attach` with the connection when it comes (at once when it is already there). */
  onConnect(attach: (nc: NatsConnection) => void): void;
  /** The `nats` dependency check (reported, not gating readiness): connected (and not reconnecting) with a round trip to the server. */
  readiness(): DependencyCheck;
}

export interface NatsHandle extends ProcessNats {
  /** Drains the connection (or closes it when it comes after the process stopped). */
  close(): Promise<void>;
}

/** No NATS: a process that does not use it. */
export const NO_NATS: ProcessNats = {
  current: undefined,
  onConnect: () => {
    throw new Error('this process was started without NATS');
  },
  readiness: () => async () => {
    throw new Error('no NATS');
  },
};

export async function startNats(opts: { url: string; name: string; logger: Logger; wait: boolean }): Promise<NatsHandle> {
  let nc: NatsConnection | undefined;
  let closed = false;
  const attached: ((nc: NatsConnection) => void)[] = [];
  const connected = (conn: NatsConnection) => {
    if (closed) return void conn.close();
    nc = conn;
    for (const attach of attached) attach(conn);
  };
  const connecting = connectNats({ url: opts.url, name: opts.name, logger: opts.logger });
  if (opts.wait) connected(await connecting);
  else connecting.then(connected).catch((err: unknown) => opts.logger.error({ err }, 'NATS connection failed'));
  return {
    get current() {
      return nc;
    },
    onConnect: (attach) => {
      attached.push(attach);
      if (nc) attach(nc);
    },
    readiness: () => natsReadiness(opts.wait && nc ? nc : () => nc),
    close: async () => {
      closed = true;
      await nc?.drain().catch(() => undefined);
    },
  };
}
