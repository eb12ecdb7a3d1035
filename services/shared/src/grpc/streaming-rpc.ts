// Streaming gRPC methods: client streaming (uploads) and server streaming (downloads), both sides,
// with backpressure both ways. Servers take clientStreaming()/serverStreaming() handlers beside unary
// ones (implementWithStreaming); clients open calls on a createClient() client (openClientStream,
// openServerStream). Deadlines, answers, failures and telemetry as for unary calls.
import * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import { once } from 'node:events';
import { DomainError, fromGrpcError, toGrpcError } from '../domain/errors.js';
import { channelOf, deadlineOf, settleWith, type CallOptions, type PromiseClient } from './client.js';
import type { AnyMethod } from './loader.js';
import { answerCall, callContext, implement, logHandlerFailure, type CallContext, type GrpcObservability, type Handlers } from './server.js';
import { grpcTypeOf, observeClientCall, observeServerCall } from './telemetry.js';
import type { Logger } from '../telemetry/logger.js';
import { context } from '../telemetry/tracing.js';

type ServiceDefinition = grpc.ServiceDefinition;

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
  const abort = new AbortController();
  call.once('cancelled', () => abort.abort(new DomainError('unavailable', 'the call was cancelled')));
  return { ...callContext(call), signal: abort.signal };
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
  const logFailure = (err: unknown, path: string) => logHandlerFailure(logger, err, path);
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
        answerCall(
          () => handler.handle(requestsOf(call), streamContext(call)),
          callback,
          observed,
          (err) => logFailure(err, method.path),
          () => call.cancelled,
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
      deadlineOf(opts, defaultTimeoutMs),
      settleWith<ResponseOf<D[K]>>(
        observed,
        (res) => {
          settled = true;
          resolve(res);
        },
        (err) => {
          settled = true;
          failure = err;
          reject(err);
        },
      ),
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
    deadlineOf(opts, defaultTimeoutMs),
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
