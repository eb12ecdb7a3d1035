// Spans at our own boundaries, made with @opentelemetry/api alone: HTTP server (gateway, token
// server), gRPC client/server (grpc/client.ts, grpc/server.ts), NATS publish/consume (job relay, settlement events, worker).
// Without a registered tracer provider every call here is a cheap no-op; with one (telemetry.ts in a
// process, or a test's in-memory provider) they form one trace across the services. Context travels as
// W3C traceparent/tracestate through whatever propagator is registered globally.
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';

export { SpanKind, SpanStatusCode, context, trace };
export type { Context, Span };

/** The tracer every span of ours comes from (instrumentation scope name). */
export const TRACER_NAME = '@partner/shared';

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Whether a tracer provider is registered: the SDK telemetry.ts starts when traces are exported, or a
 * test's. Without one the API's proxy has no tracer to delegate to, and every span is a no-op, so a
 * hot path may skip making them.
 */
export function tracerProviderRegistered(): boolean {
  const provider = trace.getTracerProvider() as ReturnType<typeof trace.getTracerProvider> & {
    getDelegateTracer?(name: string): unknown;
  };
  return provider.getDelegateTracer?.(TRACER_NAME) !== undefined;
}

/** The trace id of the active span (or of ctx), for log lines; undefined when nothing is traced. */
export function traceIdOf(ctx: Context = context.active()): string | undefined {
  const sc = trace.getSpanContext(ctx);
  return sc && isSpanContextValid(sc) ? sc.traceId : undefined;
}

/** `{ traceId }` for a log line when there is a trace, `{}` otherwise. */
export function traceFields(ctx: Context = context.active()): { traceId?: string } {
  const traceId = traceIdOf(ctx);
  return traceId ? { traceId } : {};
}

// ---------------------------------------------------------------------------------------------
// Carriers

/** Anything with get/set of string values by (lower-case) name: grpc.Metadata, nats MsgHdrs. */
interface MultiMap {
  get(name: string): unknown;
  set(name: string, value: string): void;
}

const firstString = (v: unknown): string | undefined => {
  const one = Array.isArray(v) ? v[0] : v;
  return typeof one === 'string' && one !== '' ? one : undefined;
};

const multiMapGetter: TextMapGetter<MultiMap> = {
  get: (carrier, key) => firstString(carrier.get(key)),
  // Propagators only read their own keys; keys() is not needed for traceparent/tracestate/baggage.
  keys: () => [],
};

const multiMapSetter: TextMapSetter<MultiMap> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

/** Writes the context (traceparent, tracestate, baggage) into gRPC metadata or NATS headers. */
export function injectContext(carrier: MultiMap, ctx: Context = context.active()): void {
  propagation.inject(ctx, carrier, multiMapSetter);
}

/** Reads a context from gRPC metadata or NATS headers (ROOT_CONTEXT plus what they carry). */
export function extractContext(carrier: MultiMap | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier, multiMapGetter) : ROOT_CONTEXT;
}

/** The context as a plain object (traceparent, tracestate), e.g. to store beside queued work. */
export function contextCarrier(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

const headerGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  get: (carrier, key) => firstString(carrier[key]),
  keys: (carrier) => Object.keys(carrier),
};

// ---------------------------------------------------------------------------------------------
// Spans

/** Ends a span with the error's message and ERROR status. */
export function failSpan(span: Span, err: unknown, message?: string): void {
  const e = err instanceof Error ? err : new Error(String(err));
  span.recordException(e);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message ?? e.message });
}

/**
 * Runs fn in a new span (child of the active context unless parent is given), ending it when fn
 * settles; a thrown error marks it failed and is rethrown.
 */
export async function inSpan<T>(
  name: string,
  opts: { kind?: SpanKind; attributes?: Attributes; parent?: Context; links?: Link[] },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = opts.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes, links: opts.links }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP server spans

export interface HttpServerSpan {
  span: Span;
  /** The context to run the request in (the span active). */
  context: Context;
  /** Ends the span with the route template (its name becomes "METHOD /route") and the status. */
  end(route: string | undefined, status: number): void;
}

/**
 * Starts the server span of an incoming HTTP request. A caller's traceparent becomes the parent only
 * when trustTraceparent is set (a partner must not choose our trace ids or sampling); otherwise the
 * request starts a new trace that merely links to the caller's context.
 */
export function startHttpServerSpan(
  req: { method: string; headers: Record<string, string | string[] | undefined> },
  opts: { trustTraceparent: boolean },
): HttpServerSpan {
  const incoming = propagation.extract(ROOT_CONTEXT, req.headers, headerGetter);
  const incomingSpan = trace.getSpanContext(incoming);
  const parent = opts.trustTraceparent ? incoming : ROOT_CONTEXT;
  const links: Link[] = !opts.trustTraceparent && incomingSpan && isSpanContextValid(incomingSpan) ? [{ context: incomingSpan }] : [];
  const span = tracer().startSpan(
    req.method,
    { kind: SpanKind.SERVER, root: !opts.trustTraceparent, links, attributes: { 'http.request.method': req.method } },
    parent,
  );
  return {
    span,
    context: trace.setSpan(parent, span),
    end: (route, status) => {
      if (route) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', status);
      // Server spans: 5xx is an error of ours; 4xx is the client's (OTel HTTP semantic conventions).
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}
