// A peer's state through gRPC: a dependency check (reported on /readyz's body and /dependencies, never
// making the caller unready) that asks a peer's grpc.health.v1 whether a service is SERVING, on the
// same channel as the calls, cached briefly.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { channelOf } from './client.js';
import { PROTO_LOADER_OPTIONS, type AnyMethod } from './loader.js';
import type { DependencyCheck } from '../http/ops-server.js';

let healthCheckMethod: AnyMethod | undefined;
function healthCheck(): AnyMethod {
  healthCheckMethod ??= (() => {
    const def = protoLoader.loadSync(healthProtoPath, PROTO_LOADER_OPTIONS);
    return (def['grpc.health.v1.Health'] as unknown as Record<string, AnyMethod>).Check!;
  })();
  return healthCheckMethod;
}

/**
 * A dependency check asking the peer behind a createClient() client (on its own channel, so it sees
 * what the calls see) whether `service` is SERVING, with a short deadline. The answer is cached for
 * cacheMs so frequent probes of many replicas do not multiply into health calls. Not traced, not
 * counted in the gRPC client metrics.
 */
export function grpcReadiness(client: object, service: string, opts: { timeoutMs?: number; cacheMs?: number } = {}): DependencyCheck {
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
