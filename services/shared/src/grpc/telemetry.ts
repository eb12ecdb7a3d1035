// Metrics and spans of gRPC calls, used by client.ts, server.ts and streaming-rpc.ts: calls and their
// duration by service, method, type and status code (Prometheus, per process registry), and
// client/server spans with the trace context carried in the call's metadata.
import * as grpc from '@grpc/grpc-js';
import { Counter, Histogram, type Registry } from 'prom-client';
import {
  context,
  extractContext,
  injectContext,
  SpanKind,
  SpanStatusCode,
  trace,
  tracer,
  tracerProviderRegistered,
  type Context,
  type Span,
} from '../telemetry/tracing.js';
import { INVALID_SPAN_CONTEXT, ROOT_CONTEXT } from '@opentelemetry/api';

/** The span of a call when nothing is traced: the API's no-op, made once. */
const UNTRACED = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export type GrpcType = 'unary' | 'client_stream' | 'server_stream' | 'bidi_stream';
type Side = 'server' | 'client';

const LABELS = ['grpc_service', 'grpc_method', 'grpc_type', 'grpc_code'] as const;
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

interface SideMetrics {
  handled: Counter<(typeof LABELS)[number]>;
  seconds: Histogram<(typeof LABELS)[number]>;
}

// One set per registry and side: in-process tests run several services, each with its own registry.
const bySide: Record<Side, WeakMap<Registry, SideMetrics>> = { server: new WeakMap(), client: new WeakMap() };

function metricsFor(side: Side, registry: Registry): SideMetrics {
  let m = bySide[side].get(registry);
  if (!m) {
    const who = side === 'server' ? 'handled by this server' : 'made by this client';
    m = {
      handled: new Counter({
        name: `partner_grpc_${side}_handled_total`,
        help: `gRPC calls ${who} that completed, by service, method, type and status code.`,
        labelNames: LABELS,
        registers: [registry],
      }),
      seconds: new Histogram({
        name: `partner_grpc_${side}_handling_seconds`,
        help: `Duration of gRPC calls ${who}, by service, method, type and status code.`,
        labelNames: LABELS,
        buckets: BUCKETS,
        registers: [registry],
      }),
    };
    bySide[side].set(registry, m);
  }
  return m;
}

/** "/partner.job.v1.JobService/SubmitJob" → ["partner.job.v1.JobService", "SubmitJob"]. */
export function splitPath(path: string): [string, string] {
  const [, service = 'unknown', method = 'unknown'] = path.split('/');
  return [service, method];
}

export function grpcTypeOf(m: { requestStream: boolean; responseStream: boolean }): GrpcType {
  if (m.requestStream) return m.responseStream ? 'bidi_stream' : 'client_stream';
  return m.responseStream ? 'server_stream' : 'unary';
}

/** Status name of a gRPC code: 0 → "OK", 5 → "NOT_FOUND". */
export function codeName(code: number): string {
  return grpc.status[code] ?? String(code);
}

// Server spans are errors only for codes that mean the server failed (OTel RPC semantic conventions).
const SERVER_ERROR_CODES = new Set<number>([
  grpc.status.UNKNOWN,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.INTERNAL,
  grpc.status.UNAVAILABLE,
  grpc.status.DATA_LOSS,
]);

/** One gRPC call being observed: its span, and done() records the outcome once. */
export interface ObservedCall {
  span: Span;
  /** The context to run the handler in (server) or the one injected into metadata (client). */
  context: Context;
  done(code: number, message?: string): void;
}

function observe(
  side: Side,
  path: string,
  type: GrpcType,
  parent: Context,
  registry: Registry | undefined,
): ObservedCall {
  const [service, method] = splitPath(path);
  const traced = parent !== ROOT_CONTEXT || tracerProviderRegistered();
  const span = traced
    ? tracer().startSpan(
        `${service}/${method}`,
        {
          kind: side === 'server' ? SpanKind.SERVER : SpanKind.CLIENT,
          attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method },
        },
        parent,
      )
    : UNTRACED;
  const started = process.hrtime.bigint();
  let finished = false;
  return {
    span,
    context: traced ? trace.setSpan(parent, span) : parent,
    done: (code, message) => {
      if (finished) return;
      finished = true;
      if (traced) {
        span.setAttribute('rpc.grpc.status_code', code);
        if (code !== grpc.status.OK && (side === 'client' || SERVER_ERROR_CODES.has(code))) {
          span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
        }
        span.end();
      }
      if (registry) {
        const labels = { grpc_service: service, grpc_method: method, grpc_type: type, grpc_code: codeName(code) };
        const m = metricsFor(side, registry);
        m.handled.inc(labels);
        m.seconds.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      }
    },
  };
}

/** Server side: the span continues the caller's trace from the call's metadata. */
export function observeServerCall(path: string, type: GrpcType, metadata: grpc.Metadata, registry?: Registry): ObservedCall {
  return observe('server', path, type, extractContext(metadata), registry);
}

/**
 * Client side: a child of the active context; returns the metadata to send (a copy of the given
 * one, or a new one) carrying the span's traceparent.
 */
export function observeClientCall(
  path: string,
  type: GrpcType,
  metadata: grpc.Metadata | undefined,
  registry?: Registry,
): ObservedCall & { metadata: grpc.Metadata } {
  const call = observe('client', path, type, context.active(), registry);
  // Nothing traced: nothing to carry.
  if (call.context === ROOT_CONTEXT) return { ...call, metadata: metadata ?? new grpc.Metadata() };
  const md = metadata ? metadata.clone() : new grpc.Metadata();
  injectContext(md, call.context);
  return { ...call, metadata: md };
}

/** The code of an error a handler threw or a call failed with (grpc ServiceError shape). */
export function codeOf(err: unknown): number {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : grpc.status.UNKNOWN;
}
