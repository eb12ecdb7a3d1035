// gRPC calls in a process with no tracer provider registered (the usual case without OTEL_* settings):
// no spans are made and no trace context is sent, and the calls are counted all the same.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createClient, implement, serviceDefs, SERVICE_NAMES, startGrpcServer, type GrpcServerHandle } from './grpc.js';
import { createLogger } from './logger.js';
import { tracerProviderRegistered } from './tracing.js';

const PRODUCT = '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b';
const serverRegistry = new Registry();
const clientRegistry = new Registry();
const received: string[] = [];
let server: GrpcServerHandle;
let client: ReturnType<typeof createClient<ReturnType<typeof serviceDefs>['policy']>>;

beforeAll(async () => {
  const def = serviceDefs().policy;
  const impl = implement(
    def,
    {
      GetProduct: async (_req, ctx) => {
        received.push(...Object.keys(ctx.metadata.getMap()));
        return { product: { productId: PRODUCT, name: 'P', active: true } };
      },
      GetPolicy: async () => ({}),
      ListPolicies: async () => ({ policies: [], nextPageToken: '' }),
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

it('sends no trace context and still counts the call on both sides', async () => {
  expect(tracerProviderRegistered()).toBe(false);
  await client.GetProduct({ productId: PRODUCT });
  expect(received).not.toContain('traceparent');
  for (const registry of [serverRegistry, clientRegistry]) {
    expect(await registry.getSingleMetricAsString(registry === serverRegistry ? 'partner_grpc_server_handled_total' : 'partner_grpc_client_handled_total')).toMatch(
      /grpc_method="GetProduct",grpc_type="unary",grpc_code="OK"} 1/,
    );
  }
});
