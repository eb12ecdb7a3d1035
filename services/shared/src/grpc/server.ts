// gRPC servers: handlers are async functions that throw DomainError (implement), the server with the
// standard grpc.health.v1 service (startGrpcServer), and the pieces the streaming handlers
// (streaming-rpc.ts) share with the unary ones: the call's deadline, and how a handler's outcome
// becomes the call's answer, its metrics and its log line. Every call is measured (when given a
// registry) and traced (telemetry.ts).
import * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import type { Registry } from 'prom-client';
import { DomainError, toGrpcError } from '../domain/errors.js';
import { isDependencyOutage } from '../domain/outage.js';
import { observeServerCall } from './telemetry.js';
import type { Logger } from '../telemetry/logger.js';
import { context } from '../telemetry/tracing.js';
import { CallStreamServer } from './call-stream.js';
import { serviceDefs, type AnyMethod, type ServiceBinding } from './loader.js';

export interface CallContext {
  metadata: grpc.Metadata;
  /** Milliseconds left before the caller's deadline (Infinity when it sent none). */
  remainingMs(): number;
}

type ServiceDefinition = grpc.ServiceDefinition;

export type Handlers<D> = {
  [K in keyof D as string extends K ? never : K]: D[K] extends MethodDefinition<infer _Req, infer Res, infer ReqOut, infer _ResOut>
    ? (req: ReqOut, ctx: CallContext) => Promise<Res>
    : never;
};

/** Where a server's or client's calls are counted (the process's registry); absent: traced only. */
export interface GrpcObservability {
  registry?: Registry;
}

/** The caller's deadline as the handler sees it: milliseconds left (Infinity without one). */
export function callContext(call: { metadata: grpc.Metadata; getDeadline(): grpc.Deadline }): CallContext {
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  return {
    metadata: call.metadata,
    remainingMs: () => (Number.isFinite(at) && at > 0 ? at - Date.now() : Infinity),
  };
}

/**
 * A handler failure worth a log line: anything but a DomainError the handler meant (except
 * `internal`). A dependency outage the handler let through raw (answered UNAVAILABLE) is a warning,
 * without the stack: during an outage every call fails that way.
 */
export function logHandlerFailure(logger: Logger, err: unknown, path: string): void {
  if (err instanceof DomainError) {
    if (err.code === 'internal') logger.error({ err, method: path }, 'gRPC handler failed');
  } else if (isDependencyOutage(err)) logger.warn({ err: (err as Error).message, method: path }, 'gRPC call answered UNAVAILABLE: a dependency is unreachable');
  else logger.error({ err, method: path }, 'gRPC handler failed');
}

/**
 * Answers a call with a single response (unary and client-streaming): the handler's result, or its
 * error through toGrpcError, with the call's span and metrics ended. `cancelled` says whether the
 * caller went away (then the failure is not the handler's and is not logged).
 */
export function answerCall(
  run: () => Promise<unknown>,
  callback: grpc.sendUnaryData<unknown>,
  observed: ReturnType<typeof observeServerCall>,
  failed: (err: unknown) => void,
  cancelled: () => boolean = () => false,
): void {
  context.with(observed.context, run).then(
    (res) => {
      observed.done(grpc.status.OK);
      callback(null, res);
    },
    (err: unknown) => {
      if (!cancelled()) failed(err);
      const status = toGrpcError(err);
      observed.done(cancelled() ? grpc.status.CANCELLED : status.code, status.details);
      callback(status);
    },
  );
}

/**
 * Adapts async handlers to grpc-js: results go to the callback, thrown errors through toGrpcError.
 * Each call runs in a server span continuing the caller's trace, and is counted in opts.registry.
 */
export function implement<D extends ServiceDefinition>(
  def: D,
  handlers: Handlers<D>,
  logger: Logger,
  opts: GrpcObservability = {},
): grpc.UntypedServiceImplementation {
  const impl: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(def) as [string, AnyMethod][]) {
    const handler = (handlers as Record<string, (req: unknown, ctx: CallContext) => Promise<unknown>>)[name];
    if (!handler) throw new Error(`no handler for ${method.path}`);
    impl[name] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const observed = observeServerCall(method.path, 'unary', call.metadata, opts.registry);
      answerCall(
        () => handler(call.request, callContext(call)),
        callback,
        observed,
        (err) => logHandlerFailure(logger, err, method.path),
      );
    };
  }
  return impl;
}

export interface GrpcServerHandle {
  port: number;
  setServing(status: ServingStatus): void;
  /** Stops accepting calls and waits for in-flight ones (tryShutdown, never forceShutdown first). */
  shutdown(timeoutMs?: number): Promise<void>;
}

export const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
  'grpc.max_send_message_length': 4 * 1024 * 1024,
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_permit_without_calls': 1,
  // Clients re-resolve DNS only when a connection ends: recycling connections every 5 minutes lets
  // round_robin find pods added by a scale-out. The grace covers the longest stream (an upload).
  'grpc.max_connection_age_ms': 5 * 60_000,
  'grpc.max_connection_age_grace_ms': 5 * 60_000,
  // Channelz (grpc-js's introspection service) is not served: skip its per-call bookkeeping.
  'grpc.enable_channelz': 0,
};

/**
 * The grpc.health.v1 service name the kubelet's liveness probe asks: SERVING for as long as the
 * server answers, through the drain too (every other name turns NOT_SERVING when the drain begins,
 * and a liveness probe on those would restart a pod in the middle of its drain).
 */
export const LIVENESS_SERVICE = 'liveness';

export async function startGrpcServer(opts: {
  host: string;
  port: number;
  services: ServiceBinding[];
}): Promise<GrpcServerHandle> {
  const server = new grpc.Server(SERVER_OPTIONS);
  const statuses: Record<string, ServingStatus> = { '': 'SERVING', [LIVENESS_SERVICE]: 'SERVING' };
  for (const s of opts.services) {
    server.addService(s.def, s.impl);
    statuses[s.name] = 'SERVING';
  }
  const health = new HealthImplementation(statuses);
  health.addToServer(server);
  // The hot unary calls may also come as messages on a long-lived stream (call-stream.ts).
  const callStreams = new CallStreamServer(opts.services);
  server.addService(serviceDefs().callStream, callStreams.implementation());
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const setServing = (status: ServingStatus) => {
    for (const name of Object.keys(statuses)) if (name !== LIVENESS_SERVICE) health.setStatus(name, status);
  };
  return {
    port,
    setServing,
    shutdown: (timeoutMs = 10_000) =>
      new Promise<void>((resolve) => {
        setServing('NOT_SERVING');
        // Streams end once their running calls are answered, so tryShutdown is not held by them.
        callStreams.close();
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, timeoutMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
