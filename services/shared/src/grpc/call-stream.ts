// Unary calls carried on long-lived bidirectional streams (proto partner/callstream/v1; issue 20).
// grpc-js spends most of a unary call's CPU on setting up and tearing down its HTTP/2 stream; a
// message on a stream that is already open costs a fraction of that (docs/performance.md, "gRPC: unary
// against a stream"). The hot calls (STREAMED_METHODS) therefore travel as messages on a few open
// streams per client, behind the same promise client (client.ts), with the same deadline,
// metadata (trace context), errors and metrics, and the same server handlers as their unary form.
//
// Server side (CallStreamServer, offered by every startGrpcServer): each message runs the method's
// unary handler with a call object carrying the request, the metadata and the deadline; its answer
// or error goes back as one message. On shutdown the server takes no new message, answers the ones
// it runs, then ends each stream with status OK; a message it did not run is answered not_run.
//
// Client side (CallStreamClient): LANES streams per client, opened lazily and used in turn, so that
// calls still spread over the pods round_robin connects to (each stream is placed as a call would
// be, and connections are recycled every 5 minutes: SERVER_OPTIONS). A call's deadline is a timer of
// its own. A call answered not_run, or in flight on a stream the server ended cleanly, was never run:
// it is sent again as a plain unary call. A call on a stream that broke (connection lost) fails
// UNAVAILABLE, as a unary call on that connection would. A server without the stream service
// (UNIMPLEMENTED; an older version during a rollout) turns the client to unary calls for good.
import * as grpc from '@grpc/grpc-js';
import type { CallsRequest } from '../generated/partner/callstream/v1/CallsRequest.js';
import type { CallsResponse__Output } from '../generated/partner/callstream/v1/CallsResponse.js';
import type { CallsRequest__Output } from '../generated/partner/callstream/v1/CallsRequest.js';
import type { CallsResponse } from '../generated/partner/callstream/v1/CallsResponse.js';
import { serviceDefs, type AnyMethod, type ServiceBinding } from './loader.js';

/**
 * The calls that take the stream: the durable steps every submit makes, and the reads partners make
 * most (issue 34: a poll of GET /v1/jobs/{id} and a page of policies or events spent about half of the
 * gateway's and the service's CPU on the unary call's HTTP/2 stream; docs/performance.md, "Reads").
 */
export const STREAMED_METHODS: ReadonlySet<string> = new Set([
  '/partner.job.v1.JobService/SubmitJob',
  '/partner.job.v1.JobService/SettleJob',
  '/partner.job.v1.JobService/ClaimJobs',
  '/partner.submission.v1.SubmissionService/CreateSubmission',
  '/partner.job.v1.JobService/GetJob',
  '/partner.policy.v1.PolicyService/ListPolicies',
  '/partner.policy.v1.PolicyService/GetPolicy',
  '/partner.events.v1.EventsService/ListEvents',
  '/partner.events.v1.EventsService/GetEvent',
]);

/** Streams per client. */
export const LANES = 2;

const callsMethod = () => serviceDefs().callStream.Calls as unknown as AnyMethod;

/** ASCII metadata as a plain map (binary -bin values are not carried; none of ours are binary). */
function toMap(md: grpc.Metadata | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!md) return out;
  for (const [k, v] of Object.entries(md.getMap())) if (typeof v === 'string') out[k] = v;
  return out;
}

function toMetadata(map: Record<string, string> | undefined): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(map ?? {})) md.set(k, v);
  return md;
}

interface ServerStream {
  stream: grpc.ServerDuplexStream<CallsRequest__Output, CallsResponse>;
  inFlight: number;
  ended: boolean;
  /** The client ended its side: no more calls will come. */
  clientDone: boolean;
}

export class CallStreamServer {
  private readonly methods = new Map<string, { def: AnyMethod; handle: grpc.handleUnaryCall<unknown, unknown> }>();
  private readonly streams = new Set<ServerStream>();
  private closing = false;

  constructor(bindings: ServiceBinding[]) {
    for (const b of bindings) {
      for (const [name, def] of Object.entries(b.def) as [string, AnyMethod][]) {
        const handle = b.impl[name];
        if (!def.requestStream && !def.responseStream && typeof handle === 'function') {
          this.methods.set(def.path, { def, handle: handle as grpc.handleUnaryCall<unknown, unknown> });
        }
      }
    }
  }

  /** The CallStreamService implementation to add to the server. */
  implementation(): grpc.UntypedServiceImplementation {
    return { Calls: (stream: grpc.ServerDuplexStream<CallsRequest__Output, CallsResponse>) => this.open(stream) };
  }

  private open(stream: grpc.ServerDuplexStream<CallsRequest__Output, CallsResponse>): void {
    const s: ServerStream = { stream, inFlight: 0, ended: false, clientDone: false };
    this.streams.add(s);
    const gone = () => {
      s.ended = true;
      this.streams.delete(s);
    };
    stream.on('data', (frame: CallsRequest__Output) => this.run(s, frame));
    stream.on('end', () => {
      // The client has no more calls: finish once the running ones are answered.
      s.clientDone = true;
      if (s.inFlight === 0) this.end(s);
    });
    stream.on('error', gone);
    stream.on('cancelled', gone);
    stream.on('close', gone);
    if (this.closing) this.end(s);
  }

  private reply(s: ServerStream, frame: CallsResponse): void {
    if (!s.ended) s.stream.write(frame);
  }

  private run(s: ServerStream, frame: CallsRequest__Output): void {
    const method = this.methods.get(frame.method);
    if (this.closing || !method) {
      this.reply(s, {
        id: frame.id,
        code: this.closing ? grpc.status.UNAVAILABLE : grpc.status.UNIMPLEMENTED,
        details: this.closing ? 'server shutting down' : `${frame.method} is not offered on the call stream`,
        notRun: true,
      });
      return;
    }
    let request: unknown;
    try {
      request = method.def.requestDeserialize(frame.request);
    } catch (err) {
      this.reply(s, { id: frame.id, code: grpc.status.INTERNAL, details: `request could not be read: ${(err as Error).message}` });
      return;
    }
    const deadline = frame.timeoutMs > 0 ? new Date(Date.now() + frame.timeoutMs) : Infinity;
    const call = { request, metadata: toMetadata(frame.metadata), getDeadline: () => deadline, getPath: () => frame.method };
    s.inFlight++;
    method.handle(call as unknown as grpc.ServerUnaryCall<unknown, unknown>, (err, res) => {
      s.inFlight--;
      if (err) {
        const e = err as Partial<grpc.ServiceError>;
        this.reply(s, { id: frame.id, code: e.code ?? grpc.status.UNKNOWN, details: e.details ?? e.message ?? '', metadata: toMap(e.metadata) });
      } else {
        this.reply(s, { id: frame.id, code: grpc.status.OK, response: method.def.responseSerialize(res as object) });
      }
      if ((this.closing || s.clientDone) && s.inFlight === 0) this.end(s);
    });
  }

  private end(s: ServerStream): void {
    if (s.ended) return;
    s.ended = true;
    this.streams.delete(s);
    s.stream.end();
  }

  /** Shutting down: no new call runs; each stream ends once its running calls are answered. */
  close(): void {
    this.closing = true;
    for (const s of [...this.streams]) if (s.inFlight === 0) this.end(s);
  }
}

interface PendingCall {
  method: AnyMethod;
  callback: grpc.requestCallback<unknown>;
  timer: NodeJS.Timeout;
  /** Sends the call again as a unary call (it was not run). */
  resend(): void;
}

/** One open stream and its calls in flight. */
class Lane {
  private readonly call: grpc.ClientDuplexStream<CallsRequest, CallsResponse__Output>;
  private readonly pending = new Map<number, PendingCall>();
  private nextId = 0;
  dead = false;

  constructor(channel: grpc.Client, onUnimplemented: () => void) {
    const m = callsMethod();
    this.call = channel.makeBidiStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, new grpc.Metadata(), {}) as unknown as grpc.ClientDuplexStream<
      CallsRequest,
      CallsResponse__Output
    >;
    this.call.on('data', (frame: CallsResponse__Output) => this.answer(frame));
    this.call.on('status', (status: grpc.StatusObject) => this.closed(status, onUnimplemented));
    // 'error' comes with a non-OK status, handled in 'status'; listening keeps it from being thrown.
    this.call.on('error', () => undefined);
  }

  send(method: AnyMethod, request: unknown, metadata: grpc.Metadata, timeoutMs: number, callback: grpc.requestCallback<unknown>, resend: () => void): void {
    this.nextId = (this.nextId + 1) >>> 0 || 1;
    const id = this.nextId;
    const timer = setTimeout(() => {
      this.pending.delete(id);
      callback(Object.assign(new Error('Deadline exceeded'), { code: grpc.status.DEADLINE_EXCEEDED, details: 'Deadline exceeded', metadata: new grpc.Metadata() }));
    }, timeoutMs);
    this.pending.set(id, { method, callback, timer, resend });
    this.call.write({ id, method: method.path, request: method.requestSerialize(request as object), timeoutMs, metadata: toMap(metadata) });
  }

  private answer(frame: CallsResponse__Output): void {
    const p = this.pending.get(frame.id);
    if (!p) return; // its deadline passed
    this.pending.delete(frame.id);
    clearTimeout(p.timer);
    if (frame.notRun) return p.resend();
    if (frame.code === grpc.status.OK) {
      let res: unknown;
      try {
        res = p.method.responseDeserialize(frame.response);
      } catch (err) {
        return p.callback(Object.assign(new Error('response could not be read'), { code: grpc.status.INTERNAL, details: (err as Error).message, metadata: new grpc.Metadata() }));
      }
      return p.callback(null, res);
    }
    p.callback(Object.assign(new Error(frame.details), { code: frame.code, details: frame.details, metadata: toMetadata(frame.metadata) }));
  }

  private closed(status: grpc.StatusObject, onUnimplemented: () => void): void {
    this.dead = true;
    if (status.code === grpc.status.UNIMPLEMENTED) onUnimplemented();
    // Ended cleanly (the server shutting down) or never offered: what is still pending was not run.
    const notRun = status.code === grpc.status.OK || status.code === grpc.status.UNIMPLEMENTED;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      clearTimeout(p.timer);
      if (notRun) p.resend();
      else p.callback(Object.assign(new Error(status.details), { code: grpc.status.UNAVAILABLE, details: `call stream lost: ${status.details}`, metadata: new grpc.Metadata() }));
    }
  }

  close(): void {
    if (!this.dead) this.call.end();
  }
}

export class CallStreamClient {
  private readonly lanes: Array<Lane | undefined> = [];
  private turn = 0;
  private unsupported = false;

  constructor(
    private readonly channel: grpc.Client,
    private readonly laneCount = LANES,
  ) {}

  /** False once the server turned out not to offer the stream: send unary calls instead. */
  get usable(): boolean {
    return !this.unsupported;
  }

  send(method: AnyMethod, request: unknown, metadata: grpc.Metadata, timeoutMs: number, callback: grpc.requestCallback<unknown>, resend: () => void): void {
    if (this.unsupported) return resend();
    const i = this.turn++ % this.laneCount;
    let lane = this.lanes[i];
    if (!lane || lane.dead) {
      lane = new Lane(this.channel, () => (this.unsupported = true));
      this.lanes[i] = lane;
    }
    lane.send(method, request, metadata, timeoutMs, callback, resend);
  }

  close(): void {
    for (const l of this.lanes) l?.close();
  }
}
