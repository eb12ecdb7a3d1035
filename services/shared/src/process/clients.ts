// A process's gRPC clients: which services it calls comes from the registry (processes.json `calls`),
// their addresses and call settings from its configuration (<NAME>_GRPC_ADDR, GRPC_TIMEOUT_MS,
// GRPC_CALL_STREAMS), read by its config.ts like every other variable. The two must agree: a call the
// registry lists without an address, or an address for a call it does not list, fails the start.
import type { Registry } from 'prom-client';
import { createClient, type PromiseClient } from '../grpc/client.js';
import { SERVICE_NAMES, serviceDefs } from '../grpc/loader.js';
import { grpcReadiness } from '../grpc/readiness.js';
import type { DependencyCheck } from '../http/ops-server.js';
import { processEntry } from './registry.js';

export type ServiceName = keyof typeof SERVICE_NAMES;
type Defs = ReturnType<typeof serviceDefs>;

export type GrpcClients<K extends ServiceName> = { [N in K]: PromiseClient<Defs[N]> };

/** The client settings of a process's configuration. */
export interface GrpcClientsConfig<K extends ServiceName> {
  /** Address of each service it calls (<NAME>_GRPC_ADDR). */
  grpc: Readonly<Record<K, string>>;
  /** Default deadline of a call (GRPC_TIMEOUT_MS). */
  grpcTimeoutMs: number;
  /** Hot calls as messages on open streams (GRPC_CALL_STREAMS). */
  grpcCallStreams: boolean;
}

/** One client per service the registry says `process` calls, counted in `registry`. */
export function createClients<K extends ServiceName>(process: string, config: GrpcClientsConfig<K>, registry: Registry): GrpcClients<K> {
  const calls = processEntry(process).calls;
  const configured = Object.keys(config.grpc);
  const unaddressed = calls.filter((c) => !configured.includes(c));
  const unlisted = configured.filter((c) => !calls.includes(c));
  if (unaddressed.length > 0 || unlisted.length > 0) {
    throw new Error(
      `${process}: the registry (services/processes.json) and its configuration disagree on the gRPC services it calls: ` +
        `registry ${calls.join(', ') || 'none'}; configured ${configured.join(', ') || 'none'}`,
    );
  }
  const defs = serviceDefs();
  const options = { registry, callStreams: config.grpcCallStreams };
  return Object.fromEntries(
    (calls as K[]).map((name) => [name, createClient(defs[name], config.grpc[name], config.grpcTimeoutMs, options)]),
  ) as GrpcClients<K>;
}

/** A dependency check per client (reported, not gating readiness): the peer's grpc.health.v1 says its service is serving. */
export function clientReadiness(clients: Partial<Record<ServiceName, object>>): Record<string, DependencyCheck> {
  return Object.fromEntries(Object.entries(clients).map(([name, client]) => [name, grpcReadiness(client as object, SERVICE_NAMES[name as ServiceName])]));
}

export function closeClients(clients: Partial<Record<ServiceName, { close(): void }>>): void {
  for (const c of Object.values(clients)) c?.close();
}
