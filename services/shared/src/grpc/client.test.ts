// Addresses a client dials: host:port through DNS (every address of a headless Service), or a grpc-js
// target as written: `ipv4:a,b` reaches both replicas, calls spread over them (round_robin), and the
// calls go on when one of them is gone (issue 48, 10: replicas at fixed addresses on one machine).
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../telemetry/logger.js';
import { createClient, implement, serviceDefs, SERVICE_NAMES, startGrpcServer, type GrpcServerHandle } from './index.js';
import { grpcTarget } from './client.js';

/**
 * The policy service's four product and policy reads: the RPCs these tests call. A server that
 * implements a ServiceDefinition must handle each of its methods; the quote, bind and document RPCs
 * are no part of what is tested here.
 */
function policyReads(): ServiceDefinition {
  const all = serviceDefs().policy;
  return Object.fromEntries(['GetProduct', 'GetPolicy', 'ListPolicies', 'ListProducts'].map((m) => [m, all[m]!])) as ServiceDefinition;
}

describe('grpcTarget', () => {
  it('dials host:port through DNS and takes a target with a scheme as written', () => {
    expect(grpcTarget('127.0.0.1:50051')).toBe('dns:///127.0.0.1:50051');
    expect(grpcTarget('localhost:50051')).toBe('dns:///localhost:50051');
    expect(grpcTarget('policy.partner.svc.cluster.local:50052')).toBe('dns:///policy.partner.svc.cluster.local:50052');
    expect(grpcTarget('ipv4:127.0.0.1:50061,127.0.0.1:50062')).toBe('ipv4:127.0.0.1:50061,127.0.0.1:50062');
    expect(grpcTarget('ipv6:[::1]:50061')).toBe('ipv6:[::1]:50061');
    expect(grpcTarget('dns:///policy:50052')).toBe('dns:///policy:50052');
    expect(grpcTarget('unix:/run/policy.sock')).toBe('unix:/run/policy.sock');
  });
});

describe('a client of two replicas (ipv4:a,b)', () => {
  const servers: GrpcServerHandle[] = [];
  const calls = [0, 0];
  afterAll(async () => {
    for (const s of servers) await s.shutdown(500).catch(() => undefined);
  });

  it('spreads its calls over both, streamed and unary, and keeps calling the one left when the other stops', async () => {
    const def = policyReads();
    for (const i of [0, 1]) {
      const impl = implement(
        def,
        {
          GetProduct: async () => {
            calls[i]!++;
            return { product: { productId: 'p', name: 'P', active: true } };
          },
          GetPolicy: async () => {
            throw new Error('unexpected');
          },
          ListPolicies: async () => {
            calls[i]!++;
            return { policies: [], nextPageToken: '' };
          },
          ListProducts: async () => ({ products: [], nextPageToken: '' }),
        },
        createLogger('test', 'silent'),
      );
      servers.push(await startGrpcServer({ host: '127.0.0.1', port: 0, services: [{ name: SERVICE_NAMES.policy, def, impl }] }));
    }
    const client = createClient(def, `ipv4:${servers.map((s) => `127.0.0.1:${s.port}`).join(',')}`, 2_000);
    try {
      // GetProduct is unary; ListPolicies travels on the client's call streams (call-stream.ts).
      for (let i = 0; i < 40; i++) await Promise.all([client.GetProduct({ productId: 'p' }), client.ListPolicies({ tenantId: 't', partnerId: 'p', pageSize: 1, pageToken: '' } as never)]);
      expect(calls[0]).toBeGreaterThan(0);
      expect(calls[1]).toBeGreaterThan(0);

      await servers[0]!.shutdown(500);
      const before = calls[1]!;
      let failed = 0;
      for (let i = 0; i < 20; i++) {
        // A call in flight on the stopped replica's connection may fail once (UNAVAILABLE, retryable).
        await client.GetProduct({ productId: 'p' }).catch(() => failed++);
        await client.ListPolicies({ tenantId: 't', partnerId: 'p', pageSize: 1, pageToken: '' } as never).catch(() => failed++);
      }
      expect(calls[1]! - before).toBeGreaterThanOrEqual(38 - failed);
      expect(failed).toBeLessThanOrEqual(2);
    } finally {
      client.close();
    }
  });
});
