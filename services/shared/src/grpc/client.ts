// gRPC clients: typed promise clients with a deadline on every call (createClient), and what the
// streaming and readiness helpers share with them: the channel behind a client, the deadline of a
// call, and how a call's callback settles its promise, span and metrics.
import * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { Registry } from 'prom-client';
import { DomainError, fromGrpcError } from '../domain/errors.js';
import { codeOf, observeClientCall } from './telemetry.js';
import type { AnyMethod } from './loader.js';
import type { GrpcObservability } from './server.js';
import { CallStreamClient, STREAMED_METHODS } from './call-stream.js';

export interface CallOptions {
  /** Overrides the client's default deadline for this call. */
  timeoutMs?: number;
  metadata?: grpc.Metadata;
}

export type PromiseClient<D> = {
  [K in keyof D as string extends K ? never : K]: D[K] extends MethodDefinition<infer Req, infer _Res, infer _ReqOut, infer ResOut>
    ? (req: Req, opts?: CallOptions) => Promise<ResOut>
    : never;
} & { close(): void };

const CLIENT_OPTIONS: grpc.ChannelOptions = {
  // Headless Services resolve to every pod; spread calls across them.
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  'grpc.keepalive_time_ms': 60_000,
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
  'grpc.enable_channelz': 0,
};

/**
 * How a client calls: where its calls are counted, and whether the hot calls travel as messages on
 * open streams (call-stream.ts; GRPC_CALL_STREAMS, default true) or as plain unary calls.
 */
export interface GrpcClientOptions extends GrpcObservability {
  callStreams?: boolean;
}

/**
 * Target for an address: "host:port" becomes dns:///host:port so round_robin sees every address; a
 * grpc-js target with a scheme is used as it is, e.g. `ipv4:127.0.0.1:50061,127.0.0.1:50062` for
 * replicas at fixed addresses (round_robin over both; issue 48, 10), `dns:///svc:50051`, `unix:/path`.
 */
export function grpcTarget(address: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(address) && !/^[^:]+:\d+$/.test(address) ? address : `dns:///${address}`;
}

/** The channel (and default deadline) behind each promise client, for the streaming and readiness helpers. */
interface ClientChannel {
  channel: grpc.Client;
  defaultTimeoutMs: number;
  registry?: Registry | undefined;
}
const channels = new WeakMap<object, ClientChannel>();

export function channelOf(client: object): ClientChannel {
  const found = channels.get(client);
  if (!found) throw new Error('this needs a client made by createClient()');
  return found;
}

/** A call's deadline: the call's own timeoutMs, else the client's default, counted from now. */
export function deadlineOf(opts: CallOptions, defaultTimeoutMs: number): grpc.CallOptions {
  return { deadline: Date.now() + Math.max(1, opts.timeoutMs ?? defaultTimeoutMs) };
}

/** The callback of a single-response call: ends its span and metrics, settles with the response or a DomainError. */
export function settleWith<T>(
  observed: ReturnType<typeof observeClientCall>,
  resolve: (res: T) => void,
  reject: (err: DomainError) => void,
): grpc.requestCallback<unknown> {
  return (err, res) => {
    observed.done(err ? codeOf(err) : grpc.status.OK, err?.details);
    if (err) reject(fromGrpcError(err));
    else resolve(res as T);
  };
}

/**
 * A promise-returning client for a service definition. Every call carries a deadline (the call's
 * timeoutMs or the client's default) and rejects with a DomainError (fromGrpcError). Each call is a
 * client span (child of the active context, its traceparent sent in the metadata) and is counted in
 * options.registry.
 */
export function createClient<D extends grpc.ServiceDefinition>(
  def: D,
  address: string,
  defaultTimeoutMs: number,
  options: GrpcClientOptions = {},
): PromiseClient<D> {
  const channel = new grpc.Client(grpcTarget(address), grpc.credentials.createInsecure(), CLIENT_OPTIONS);
  // The hot calls travel on open streams (call-stream.ts) unless GRPC_CALL_STREAMS=false.
  const streams = options.callStreams !== false ? new CallStreamClient(channel) : undefined;
  const client: Record<string, unknown> = {
    close: () => {
      streams?.close();
      channel.close();
    },
  };
  const registry = options.registry;
  channels.set(client, { channel, defaultTimeoutMs, registry });
  for (const [name, method] of Object.entries(def) as [string, AnyMethod][]) {
    const streamed = streams && STREAMED_METHODS.has(method.path);
    client[name] = (req: object, opts: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        const observed = observeClientCall(method.path, 'unary', opts.metadata, registry);
        const callback = settleWith(observed, resolve, reject);
        const deadline = deadlineOf(opts, defaultTimeoutMs);
        const unary = () =>
          channel.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, req, observed.metadata, deadline, callback);
        if (streamed && streams.usable) {
          streams.send(method, req, observed.metadata, Math.max(1, Number(deadline.deadline) - Date.now()), callback, unary);
        } else {
          unary();
        }
      });
  }
  return client as PromiseClient<D>;
}
