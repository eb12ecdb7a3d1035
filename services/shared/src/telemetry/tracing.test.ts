import { afterEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { headers } from 'nats';
import { SpanStatusCode } from '@opentelemetry/api';
import { node } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  contextCarrier,
  extractContext,
  inSpan,
  injectContext,
  startHttpServerSpan,
  traceFields,
  traceIdOf,
  trace,
  tracerProviderRegistered,
} from './tracing.js';
import { contextFromHeaders, traceHeaders } from '../nats/client.js';

const exporter = new InMemorySpanExporter();
const provider = new node.NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
afterEach(() => exporter.reset());

const PARTNER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARTNER_SPAN = 'b7ad6b7169203331';
const traceparent = `00-${PARTNER_TRACE}-${PARTNER_SPAN}-01`;

describe('HTTP server spans', () => {
  it("starts a new trace for an untrusted caller's traceparent, linked to it", () => {
    const s = startHttpServerSpan({ method: 'POST', headers: { traceparent } }, { trustTraceparent: false });
    s.end('/v1/submissions', 202);
    const [span] = exporter.getFinishedSpans();
    expect(span!.spanContext().traceId).not.toBe(PARTNER_TRACE);
    expect(span!.parentSpanContext).toBeUndefined();
    expect(span!.links.map((l) => l.context.spanId)).toEqual([PARTNER_SPAN]);
    expect(span!.name).toBe('POST /v1/submissions');
    expect(span!.attributes).toMatchObject({ 'http.route': '/v1/submissions', 'http.response.status_code': 202 });
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('continues a trusted traceparent; 5xx marks the span failed, 4xx does not; no route keeps the method as name', () => {
    const a = startHttpServerSpan({ method: 'GET', headers: { traceparent } }, { trustTraceparent: true });
    expect(traceIdOf(a.context)).toBe(PARTNER_TRACE);
    a.end(undefined, 503);
    const b = startHttpServerSpan({ method: 'GET', headers: {} }, { trustTraceparent: true });
    b.end('/v1/health', 404);
    const [first, second] = exporter.getFinishedSpans();
    expect(first!.parentSpanContext?.spanId).toBe(PARTNER_SPAN);
    expect(first!.name).toBe('GET');
    expect(first!.status.code).toBe(SpanStatusCode.ERROR);
    expect(second!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('ignores a malformed traceparent', () => {
    const s = startHttpServerSpan({ method: 'GET', headers: { traceparent: '00-zz-yy-01' } }, { trustTraceparent: true });
    s.end('/v1/health', 200);
    expect(exporter.getFinishedSpans()[0]!.parentSpanContext).toBeUndefined();
  });
});

describe('context in carriers', () => {
  it('travels through gRPC metadata, NATS headers and plain objects', async () => {
    await inSpan('outer', {}, async (span) => {
      const traceId = span.spanContext().traceId;
      const md = new grpc.Metadata();
      injectContext(md);
      expect(md.get('traceparent')[0]).toMatch(new RegExp(`^00-${traceId}-${span.spanContext().spanId}-01$`));
      expect(traceIdOf(extractContext(md))).toBe(traceId);
      expect(traceIdOf(contextFromHeaders(traceHeaders()))).toBe(traceId);
      expect(contextCarrier().traceparent).toBe(md.get('traceparent')[0]);
      expect(traceFields()).toEqual({ traceId });
    });
  });

  it('yields no context from empty carriers and no trace fields outside a span', () => {
    expect(trace.getSpanContext(extractContext(new grpc.Metadata()))).toBeUndefined();
    expect(trace.getSpanContext(contextFromHeaders(headers()))).toBeUndefined();
    expect(trace.getSpanContext(contextFromHeaders(undefined))).toBeUndefined();
    expect(traceFields()).toEqual({});
  });

  it('inSpan ends the span failed and rethrows when the work throws', async () => {
    await expect(inSpan('failing', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const [span] = exporter.getFinishedSpans();
    expect(span!.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'boom' });
    expect(span!.events.map((e) => e.name)).toEqual(['exception']);
  });
});

describe('tracerProviderRegistered', () => {
  it('tells a registered tracer provider from none', () => {
    expect(tracerProviderRegistered()).toBe(true);
    trace.disable();
    try {
      expect(tracerProviderRegistered()).toBe(false);
    } finally {
      provider.register();
    }
  });
});
