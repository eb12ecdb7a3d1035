import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { node } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import { notFound } from '../domain/errors.js';
import { createClient, grpcReadiness, implement, LIVENESS_SERVICE, serviceDefs, SERVICE_NAMES, startGrpcServer, type GrpcServerHandle } from './index.js';
import { codeName, grpcTypeOf, splitPath } from './telemetry.js';
import { createLogger } from '../telemetry/logger.js';
import { inSpan, trace } from '../telemetry/tracing.js';

/**
 * The policy service's four product and policy reads: the RPCs these tests call. A server that
 * implements a ServiceDefinition must handle each of its methods; the quote, bind and document RPCs
 * are no part of what is tested here.
 */
function policyReads(): ServiceDefinition {
  const all = serviceDefs().policy;
  return Object.fromEntries(['GetProduct', 'GetPolicy', 'ListPolicies', 'ListProducts'].map((m) => [m, all[m]!])) as ServiceDefinition;
}

const exporter = new InMemorySpanExporter();
const provider = new node.NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

const PRODUCT = '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b';
const serverRegistry = new Registry();
const clientRegistry = new Registry();
/** The metadata keys each GetProduct call arrived with. */
const received: string[][] = [];
let server: GrpcServerHandle;
let client: ReturnType<typeof createClient<ReturnType<typeof serviceDefs>['policy']>>;

beforeAll(async () => {
  const def = policyReads();
  const impl = implement(
    def,
    {
      GetProduct: async (req, ctx) => {
        received.push(Object.keys(ctx.metadata.getMap()));
        if (req.productId !== PRODUCT) throw notFound('product');
        return { product: { productId: PRODUCT, name: 'P', active: true } };
      },
      GetPolicy: async () => {
        throw new Error('unexpected');
      },
      ListPolicies: async () => ({ policies: [], nextPageToken: '' }),
      ListProducts: async () => ({ products: [], nextPageToken: '' }),
    },
    createLogger('test', 'silent'),
    { registry: serverRegistry },
  );
  server = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [{ name: SERVICE_NAMES.policy, def, impl }] });
  client = createClient(def, `127.0.0.1:${server.port}`, 2_000, { registry: clientRegistry });
});
afterAll(async () => {
  client.close();
  await server.shutdown(1_000);
});

/** Sum of the samples of `name` (a histogram's `_count` too) whose labels include `labels`. */
const value = async (registry: Registry, name: string, labels: Record<string, string>) => {
  const family = name.replace(/_count$/, '');
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === family);
  const values = (metric?.values ?? []) as { labels: Record<string, string | number>; value: number; metricName?: string }[];
  return values
    .filter((v) => (v.metricName ?? family) === name && Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((a, v) => a + v.value, 0);
};

describe('gRPC calls', () => {
  it('are counted on both sides by service, method, type and status code', async () => {
    await client.GetProduct({ productId: PRODUCT });
    await expect(client.GetProduct({ productId: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(client.GetPolicy({})).rejects.toMatchObject({ code: 'internal' });
    const labels = (method: string, code: string) => ({ grpc_service: SERVICE_NAMES.policy, grpc_method: method, grpc_type: 'unary', grpc_code: code });
    for (const [registry, side] of [
      [serverRegistry, 'server'],
      [clientRegistry, 'client'],
    ] as const) {
      expect(await value(registry, `partner_grpc_${side}_handled_total`, labels('GetProduct', 'OK'))).toBe(1);
      expect(await value(registry, `partner_grpc_${side}_handled_total`, labels('GetProduct', 'NOT_FOUND'))).toBe(1);
      expect(await value(registry, `partner_grpc_${side}_handled_total`, labels('GetPolicy', 'INTERNAL'))).toBe(1);
      expect(await value(registry, `partner_grpc_${side}_handling_seconds_count`, { grpc_method: 'GetProduct' })).toBe(2);
    }
  });

  it('are client and server spans of the caller’s trace, failed by the codes that mean failure on each side', async () => {
    exporter.reset();
    const traceId = await inSpan('caller', {}, async (span) => {
      await client.GetProduct({ productId: PRODUCT });
      await client.GetProduct({ productId: '00000000-0000-4000-8000-000000000000' }).catch(() => undefined);
      return span.spanContext().traceId;
    });
    const spans = exporter.getFinishedSpans().filter((s) => s.name === `${SERVICE_NAMES.policy}/GetProduct`);
    expect(spans).toHaveLength(4);
    expect(spans.every((s) => s.spanContext().traceId === traceId)).toBe(true);
    const clients = spans.filter((s) => s.kind === SpanKind.CLIENT);
    const servers = spans.filter((s) => s.kind === SpanKind.SERVER);
    for (const s of servers) expect(clients.map((c) => c.spanContext().spanId)).toContain(s.parentSpanContext?.spanId);
    // NOT_FOUND: an error for the client, not for the server (OTel RPC conventions).
    const notFoundCode = 5;
    expect(clients.find((s) => s.attributes['rpc.grpc.status_code'] === notFoundCode)!.status.code).toBe(SpanStatusCode.ERROR);
    expect(servers.find((s) => s.attributes['rpc.grpc.status_code'] === notFoundCode)!.status.code).toBe(SpanStatusCode.UNSET);
    expect(received.at(-1)).toContain('traceparent');
  });

  it('make no span and send no trace context when no tracer provider is registered, and are still counted', async () => {
    exporter.reset();
    const counted = () => value(clientRegistry, 'partner_grpc_client_handled_total', { grpc_method: 'GetProduct', grpc_code: 'OK' });
    const before = await counted();
    trace.disable();
    try {
      await client.GetProduct({ productId: PRODUCT });
    } finally {
      provider.register();
    }
    expect(received.at(-1)).not.toContain('traceparent');
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    expect(await counted()).toBe(before + 1);
    expect(await value(serverRegistry, 'partner_grpc_server_handled_total', { grpc_method: 'GetProduct', grpc_code: 'OK' })).toBe(before + 1);
  });
});

describe('grpcReadiness', () => {
  it('is ready while the peer is SERVING, unready once it is NOT_SERVING (draining), and caches answers', async () => {
    const ready = grpcReadiness(client, SERVICE_NAMES.policy, { cacheMs: 0 });
    await expect(ready()).resolves.toBeUndefined();
    const cached = grpcReadiness(client, SERVICE_NAMES.policy, { cacheMs: 60_000 });
    await cached();
    const alive = grpcReadiness(client, LIVENESS_SERVICE, { cacheMs: 0 });
    server.setServing('NOT_SERVING');
    try {
      await expect(ready()).rejects.toThrow('NOT_SERVING');
      await expect(cached()).resolves.toBeUndefined();
      // The name the kubelet's liveness probe asks stays SERVING through a drain.
      await expect(alive()).resolves.toBeUndefined();
    } finally {
      server.setServing('SERVING');
    }
    await expect(grpcReadiness(client, 'partner.nope.v1.Nope', { cacheMs: 0 })()).rejects.toThrow('NOT_FOUND');
  });

  it('is unready when the peer does not answer', async () => {
    const gone = createClient(serviceDefs().policy, '127.0.0.1:1', 500);
    try {
      await expect(grpcReadiness(gone, SERVICE_NAMES.policy, { timeoutMs: 300 })()).rejects.toThrow(/UNAVAILABLE|DEADLINE_EXCEEDED/);
    } finally {
      gone.close();
    }
  });
});

describe('helpers', () => {
  it('name paths, types and codes', () => {
    expect(splitPath('/partner.job.v1.JobService/SubmitJob')).toEqual(['partner.job.v1.JobService', 'SubmitJob']);
    expect(grpcTypeOf({ requestStream: true, responseStream: false })).toBe('client_stream');
    expect(grpcTypeOf({ requestStream: false, responseStream: true })).toBe('server_stream');
    expect(codeName(0)).toBe('OK');
    expect(codeName(14)).toBe('UNAVAILABLE');
  });
});
