// gRPC plumbing: proto loading (one set of loader options, mirrored by scripts/gen-proto.mjs),
// typed promise clients with a deadline on every call, servers whose handlers are async functions
// that throw DomainError, and the standard grpc.health.v1 service. Client- and server-streaming
// methods have their own helpers at the end (implementWithStreaming, openClientStream,
// openServerStream), with backpressure both ways. Every call, both sides, is measured (when given a
// registry) and traced (grpc-telemetry.ts); grpcReadiness() asks a peer's grpc.health.v1 for /readyz.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { MethodDefinition } from '@grpc/proto-loader';
import { HealthImplementation, protoPath as healthProtoPath, type ServingStatus } from 'grpc-health-check';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Registry } from 'prom-client';
import { DomainError, fromGrpcError, toGrpcError } from './errors.js';
import { codeOf, grpcTypeOf, observeClientCall, observeServerCall } from './grpc-telemetry.js';
import type { Logger } from './logger.js';
import type { ReadinessCheck } from './ops.js';
import { context } from './tracing.js';
import type { ProtoGrpcType as AuthProto } from './generated/auth.js';
import type { ProtoGrpcType as EventsProto } from './generated/events.js';
import type { ProtoGrpcType as JobProto } from './generated/job.js';
import type { ProtoGrpcType as PolicyProto } from './generated/policy.js';
import type { ProtoGrpcType as SubmissionProto } from './generated/submission.js';

/** Keep in step with the flags in scripts/gen-proto.mjs. */
export const PROTO_LOADER_OPTIONS = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

const PROTO_ROOT = process.env.PROTO_DIR ?? fileURLToPath(new URL('../../../proto/', import.meta.url));

function load<T>(file: string): T {
  const def = protoLoader.loadSync(file, { ...PROTO_LOADER_OPTIONS, includeDirs: [PROTO_ROOT] });
  return grpc.loadPackageDefinition(def) as unknown as T;
}

let defs: ReturnType<typeof loadAll> | undefined;
function loadAll() {
  return {
    auth: load<AuthProto>('partner/auth/v1/auth.proto').partner.auth.v1.AuthService.service,
    events: load<EventsProto>('partner/events/v1/events.proto').partner.events.v1.EventsService.service,
    job: load<JobProto>('partner/job/v1/job.proto').partner.job.v1.JobService.service,
    policy: load<PolicyProto>('partner/policy/v1/policy.proto').partner.policy.v1.PolicyService.service,
    submission: load<SubmissionProto>('partner/submission/v1/submission.proto').partner.submission.v1.SubmissionService
      .service,
  };
}

/** Service definitions, loaded once per process. */
export function serviceDefs(): ReturnType<typeof loadAll> {
  defs ??= loadAll();
  return defs;
}

/** Fully qualified gRPC service names, as grpc.health.v1 and probes name them. */
export const SERVICE_NAMES = {
  auth: 'partner.auth.v1.AuthService',
  events: 'partner.events.v1.EventsService',
  job: 'partner.job.v1.JobService',
  policy: 'partner.policy.v1.PolicyService',
  submission: 'partner.submission.v1.SubmissionService',
} as const;

// ---------------------------------------------------------------------------------------------
// Server side

export interface CallContext {
  metadata: grpc.Metadata;
  /** Milliseconds left before the caller's deadline (Infinity when it sent none). */
  remainingMs(): number;
}

type AnyMethod = grpc.MethodDefinition<object, object>;
type ServiceDefinition = grpc.ServiceDefinition;

export type Handlers<D> = {
  [K in keyof D as string extends K ? never : K]: D[K] extends MethodDefinition<infer _Req, infer Res, infer ReqOut, infer _ResOut>
    ? (req: ReqOut, ctx: CallContext) => Promise<Res>
    : never;
};

function contextOf(call: grpc.ServerUnaryCall<unknown, unknown>): CallContext {
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  return {
    metadata: call.metadata,
    remainingMs: () => (Number.isFinite(at) && at > 0 ? at - Date.now() : Infinity),
  };
}

/** Where a server's or client's calls are counted (the process's registry); absent: traced only. */
export interface GrpcObservability {
  registry?: Registry;
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
      context.with(observed.context, () => handler(call.request, contextOf(call))).then(
        (res) => {
          observed.done(grpc.status.OK);
          callback(null, res);
        },
        (err: unknown) => {
          if (!(err instanceof DomainError) || err.code === 'internal') {
            logger.error({ err, method: method.path }, 'gRPC handler failed');
          }
          const status = toGrpcError(err);
          observed.done(status.code, status.details);
          callback(status);
          return;
        },
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

export interface ServiceBinding {
  name: string;
  def: ServiceDefinition;
  impl: grpc.UntypedServiceImplementation;
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

export async function startGrpcServer(opts: {
  host: string;
  port: number;
  services: ServiceBinding[];
}): Promise<GrpcServerHandle> {
  const server = new grpc.Server(SERVER_OPTIONS);
  const statuses: Record<string, ServingStatus> = { '': 'SERVING' };
  for (const s of opts.services) {
    server.addService(s.def, s.impl);
    statuses[s.name] = 'SERVING';
  }
  const health = new HealthImplementation(statuses);
  health.addToServer(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const setServing = (status: ServingStatus) => {
    for (const name of Object.keys(statuses)) health.setStatus(name, status);
  };
  return {
    port,
    setServing,
    shutdown: (timeoutMs = 10_000) =>
      new Promise<void>((resolve) => {
        setServing('NOT_SERVING');
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

// ---------------------------------------------------------------------------------------------
// Client side

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

/** Target for an address: "host:port" becomes dns:///host:port so round_robin sees every address. */
export function grpcTarget(address: string): string {
  return /^[a-z]+:/.test(address) && !/^[^:]+:\d+$/.test(address) ? address : `dns:///${address}`;
}

/**
 * A promise-returning client for a service definition. Every call carries a deadline (the call's
 * timeoutMs or the client's default) and rejects with a DomainError (fromGrpcError). Each call is a
 * client span (child of the active context, its traceparent sent in the metadata) and is counted in
 * observability.registry.
 */
export function createClient<D extends ServiceDefinition>(
  def: D,
  address: string,
  defaultTimeoutMs: number,
  observability: GrpcObservability = {},
): PromiseClient<D> {
  const channel = new grpc.Client(grpcTarget(address), grpc.credentials.createInsecure(), CLIENT_OPTIONS);
  const client: Record<string, unknown> = { close: () => channel.close() };
  const registry = observability.registry;
  channels.set(client, { channel, defaultTimeoutMs, registry });
  for (const [name, method] of Object.entries(def) as [string, AnyMethod][]) {
    client[name] = (req: object, opts: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        const timeout = Math.max(1, opts.timeoutMs ?? defaultTimeoutMs);
        const observed = observeClientCall(method.path, 'unary', opts.metadata, registry);
        channel.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          req,
          observed.metadata,
          { deadline: Date.now() + timeout },
          (err, res) => {
            observed.done(err ? codeOf(err) : grpc.status.OK, err?.details);
            if (err) reject(fromGrpcError(err));
            else resolve(res);
          },
        );
      });
  }
  return client as PromiseClient<D>;
}

// ---------------------------------------------------------------------------------------------
// Streaming methods (client streaming for uploads, server streaming for downloads)

/** The channel (and default deadline) behind each promise client, for the streaming helpers. */
const channels = new WeakMap<object, { channel: grpc.Client; defaultTimeoutMs: number; registry?: Registry | undefined }>();

export interface StreamCallContext extends CallContext {
  /** Aborted when the caller cancels the call or its deadline passes. */
  signal: AbortSignal;
}

/** Handler of a client-streaming method: consumes the request messages, returns the one response. */
export interface ClientStreamingHandler<ReqOut, Res> {
  readonly streaming: 'client';
  /** `requests` throws when the caller cancels; a thrown DomainError becomes the call's status. */
  readonly handle: (requests: AsyncIterable<ReqOut>, ctx: StreamCallContext) => Promise<Res>;
}

/** Handler of a server-streaming method: yields the response messages, written with backpressure. */
export interface ServerStreamingHandler<ReqOut, Res> {
  readonly streaming: 'server';
  /** Iteration stops (return() is called) when the caller cancels; a thrown DomainError ends the call with it. */
  readonly handle: (request: ReqOut, ctx: StreamCallContext) => AsyncIterable<Res>;
}

export const clientStreaming = <ReqOut, Res>(
  handle: ClientStreamingHandler<ReqOut, Res>['handle'],
): ClientStreamingHandler<ReqOut, Res> => ({ streaming: 'client', handle });

export const serverStreaming = <ReqOut, Res>(
  handle: ServerStreamingHandler<ReqOut, Res>['handle'],
): ServerStreamingHandler<ReqOut, Res> => ({ streaming: 'server', handle });

/** Like Handlers<D>, but a method may also be implemented by a streaming handler. */
export type StreamingHandlers<D> = {
  [K in keyof D as string extends K ? never : K]: D[K] extends MethodDefinition<infer _Req, infer Res, infer ReqOut, infer _ResOut>
    ? ((req: ReqOut, ctx: CallContext) => Promise<Res>) | ClientStreamingHandler<ReqOut, Res> | ServerStreamingHandler<ReqOut, Res>
    : never;
};

type AnyStreamingHandler =
  | ((req: unknown, ctx: CallContext) => Promise<unknown>)
  | ClientStreamingHandler<unknown, unknown>
  | ServerStreamingHandler<unknown, unknown>;

function streamContext(call: grpc.ServerReadableStream<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>): StreamCallContext {
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  const abort = new AbortController();
  call.once('cancelled', () => abort.abort(new DomainError('unavailable', 'the call was cancelled')));
  return {
    metadata: call.metadata,
    remainingMs: () => (Number.isFinite(at) && at > 0 ? at - Date.now() : Infinity),
    signal: abort.signal,
  };
}

/**
 * The request messages of a client-streaming call; throws if grpc-js has marked the call cancelled
 * by the time the stream ends. That is best effort: a cancel (RST_STREAM) can also reach the
 * handler as a plain end of stream before grpc-js reports it, so a protocol that must tell a
 * complete stream from a cut-off one marks its own end (as UploadAttachment's `end` message does).
 */
async function* requestsOf(call: grpc.ServerReadableStream<unknown, unknown>): AsyncGenerator<unknown> {
  for await (const message of call) yield message;
  if (call.cancelled) throw new DomainError('unavailable', 'the call was cancelled');
}

/**
 * implement() for a service with streaming methods: unary methods go through implement() itself;
 * client- and server-streaming methods take clientStreaming()/serverStreaming() handlers. A handler
 * of the wrong kind for its method is refused at start.
 */
export function implementWithStreaming<D extends ServiceDefinition>(
  def: D,
  handlers: StreamingHandlers<D>,
  logger: Logger,
  opts: GrpcObservability = {},
): grpc.UntypedServiceImplementation {
  const all = handlers as unknown as Record<string, AnyStreamingHandler | undefined>;
  const unaryDef: Record<string, AnyMethod> = {};
  const unaryHandlers: Record<string, unknown> = {};
  const impl: grpc.UntypedServiceImplementation = {};
  const logFailure = (err: unknown, path: string) => {
    if (!(err instanceof DomainError) || err.code === 'internal') logger.error({ err, method: path }, 'gRPC handler failed');
  };
  for (const [name, method] of Object.entries(def) as [string, AnyMethod][]) {
    const handler = all[name];
    if (!handler) throw new Error(`no handler for ${method.path}`);
    const kind = method.requestStream ? (method.responseStream ? 'bidi' : 'client') : method.responseStream ? 'server' : 'unary';
    const given = typeof handler === 'function' ? 'unary' : handler.streaming;
    if (kind !== given) throw new Error(`${method.path} is ${kind}, but its handler is ${given}`);
    if (typeof handler === 'function') {
      unaryDef[name] = method;
      unaryHandlers[name] = handler;
    } else if (handler.streaming === 'client') {
      impl[name] = (call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const observed = observeServerCall(method.path, grpcTypeOf(method), call.metadata, opts.registry);
        context.with(observed.context, () => handler.handle(requestsOf(call), streamContext(call))).then(
          (res) => {
            observed.done(grpc.status.OK);
            callback(null, res);
          },
          (err: unknown) => {
            if (!call.cancelled) logFailure(err, method.path);
            const status = toGrpcError(err);
            observed.done(call.cancelled ? grpc.status.CANCELLED : status.code, status.details);
            callback(status);
            return;
          },
        );
      };
    } else {
      impl[name] = (call: grpc.ServerWritableStream<unknown, unknown>) => {
        const observed = observeServerCall(method.path, grpcTypeOf(method), call.metadata, opts.registry);
        void context.with(observed.context, async () => {
          const ctx = streamContext(call);
          try {
            for await (const message of handler.handle(call.request, ctx)) {
              if (call.cancelled || call.destroyed) break;
              if (!call.write(message)) {
                // Resolves on drain, or when the caller goes away (cancel destroys the stream).
                await Promise.race([once(call, 'drain'), once(ctx.signal, 'abort')]);
              }
            }
            if (!call.cancelled && !call.destroyed) {
              call.end();
              observed.done(grpc.status.OK);
            } else observed.done(grpc.status.CANCELLED);
          } catch (err) {
            if (call.cancelled || call.destroyed) return observed.done(grpc.status.CANCELLED);
            logFailure(err, method.path);
            const status = toGrpcError(err);
            observed.done(status.code, status.details);
            call.emit('error', status);
          }
        });
      };
    }
  }
  return {
    ...implement(unaryDef as unknown as D, unaryHandlers as unknown as Handlers<D>, logger, opts),
    ...impl,
  };
}

type RequestOf<M> = M extends MethodDefinition<infer Req, infer _Res, infer _ReqOut, infer _ResOut> ? Req : never;
type ResponseOf<M> = M extends MethodDefinition<infer _Req, infer _Res, infer _ReqOut, infer ResOut> ? ResOut : never;
type MethodName<D> = keyof D & string;

function channelOf(client: object): { channel: grpc.Client; defaultTimeoutMs: number; registry?: Registry | undefined } {
  const found = channels.get(client);
  if (!found) throw new Error('streaming calls need a client made by createClient()');
  return found;
}

/** An open client-streaming call. */
export interface ClientStream<Req, ResOut> {
  /**
   * Sends one message; resolves once the stream can take more (backpressure). Rejects with the
   * call's DomainError when the server has already answered with an error.
   */
  write(message: Req): Promise<void>;
  /** Half-closes the call and resolves with the server's response (or rejects with a DomainError). */
  finish(): Promise<ResOut>;
  /** Cancels the call (the server sees CANCELLED); finish() then rejects with `unavailable`. */
  cancel(): void;
}

/**
 * Opens a client-streaming call on a createClient() client. Its deadline is opts.timeoutMs (or the
 * client's default), counted from now, for the whole stream.
 */
export function openClientStream<D extends ServiceDefinition, K extends MethodName<D>>(
  client: PromiseClient<D>,
  def: D,
  method: K,
  opts: CallOptions = {},
): ClientStream<RequestOf<D[K]>, ResponseOf<D[K]>> {
  const { channel, defaultTimeoutMs, registry } = channelOf(client);
  const m = def[method] as unknown as AnyMethod;
  if (!m.requestStream || m.responseStream) throw new Error(`${m.path} is not a client-streaming method`);
  let settled = false;
  let failure: DomainError | undefined;
  let call!: grpc.ClientWritableStream<object>;
  const observed = observeClientCall(m.path, 'client_stream', opts.metadata, registry);
  const response = new Promise<ResponseOf<D[K]>>((resolve, reject) => {
    call = channel.makeClientStreamRequest(
      m.path,
      m.requestSerialize,
      m.responseDeserialize,
      observed.metadata,
      { deadline: Date.now() + Math.max(1, opts.timeoutMs ?? defaultTimeoutMs) },
      (err, res) => {
        settled = true;
        observed.done(err ? codeOf(err) : grpc.status.OK, err?.details);
        if (err) {
          failure = fromGrpcError(err);
          reject(failure);
        } else resolve(res as ResponseOf<D[K]>);
      },
    );
  });
  // The caller may never await the response (it gave up writing); no unhandled rejection then.
  response.catch(() => undefined);
  // Writes after the call ended (server answered early) may report errors here; the response says why.
  call.on('error', () => undefined);
  return {
    write: async (message) => {
      if (failure) throw failure;
      if (settled) throw new DomainError('internal', `${m.path} answered before the upload ended`);
      if (!call.write(message)) {
        await Promise.race([once(call, 'drain'), response]);
        if (failure) throw failure;
      }
    },
    finish: () => {
      if (!settled) call.end();
      return response;
    },
    cancel: () => call.cancel(),
  };
}

/** An open server-streaming call: iterate it for the response messages. */
export interface ServerStream<ResOut> extends AsyncIterable<ResOut> {
  cancel(): void;
}

/**
 * Opens a server-streaming call on a createClient() client. Iterating yields the messages and
 * throws a DomainError if the call fails; leaving the loop early cancels the call.
 */
export function openServerStream<D extends ServiceDefinition, K extends MethodName<D>>(
  client: PromiseClient<D>,
  def: D,
  method: K,
  request: RequestOf<D[K]>,
  opts: CallOptions = {},
): ServerStream<ResponseOf<D[K]>> {
  const { channel, defaultTimeoutMs, registry } = channelOf(client);
  const m = def[method] as unknown as AnyMethod;
  if (m.requestStream || !m.responseStream) throw new Error(`${m.path} is not a server-streaming method`);
  const observed = observeClientCall(m.path, 'server_stream', opts.metadata, registry);
  const call = channel.makeServerStreamRequest(
    m.path,
    m.requestSerialize,
    m.responseDeserialize,
    request as object,
    observed.metadata,
    { deadline: Date.now() + Math.max(1, opts.timeoutMs ?? defaultTimeoutMs) },
  );
  // The call's final status (also when the caller cancels, or never iterates to the end).
  call.on('status', (st: grpc.StatusObject) => observed.done(st.code, st.details));
  return {
    cancel: () => call.cancel(),
    async *[Symbol.asyncIterator]() {
      let done = false;
      try {
        for await (const message of call) yield message as ResponseOf<D[K]>;
        done = true;
      } catch (err) {
        done = true;
        throw fromGrpcError(err);
      } finally {
        if (!done) call.cancel();
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Readiness: a peer's grpc.health.v1

let healthCheckMethod: AnyMethod | undefined;
function healthCheck(): AnyMethod {
  healthCheckMethod ??= (() => {
    const def = protoLoader.loadSync(healthProtoPath, PROTO_LOADER_OPTIONS);
    return (def['grpc.health.v1.Health'] as unknown as Record<string, AnyMethod>).Check!;
  })();
  return healthCheckMethod;
}

/**
 * A /readyz check asking the peer behind a createClient() client (on its own channel, so it sees
 * what the calls see) whether `service` is SERVING, with a short deadline. The answer is cached for
 * cacheMs so frequent probes of many replicas do not multiply into health calls. Not traced, not
 * counted in the gRPC client metrics.
 */
export function grpcReadiness(client: object, service: string, opts: { timeoutMs?: number; cacheMs?: number } = {}): ReadinessCheck {
  const { channel } = channelOf(client);
  const timeoutMs = opts.timeoutMs ?? 1_000;
  const cacheMs = opts.cacheMs ?? 3_000;
  let last: { at: number; error: Error | undefined } | undefined;
  let pending: Promise<void> | undefined;
  const ask = () =>
    new Promise<void>((resolve, reject) => {
      const m = healthCheck();
      channel.makeUnaryRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        { service },
        new grpc.Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err, res) => {
          if (err) return reject(new Error(`${grpc.status[err.code] ?? err.code}: ${err.details}`));
          const status = (res as { status?: string } | undefined)?.status;
          if (status !== 'SERVING') return reject(new Error(status ?? 'no status'));
          resolve();
        },
      );
    });
  return async () => {
    if (!last || Date.now() - last.at >= cacheMs) {
      pending ??= ask().then(
        () => void (last = { at: Date.now(), error: undefined }),
        (err: unknown) => void (last = { at: Date.now(), error: err as Error }),
      ).finally(() => (pending = undefined));
      await pending;
    }
    if (last?.error) throw last.error;
  };
}
