// gRPC plumbing: proto loading (one set of loader options, mirrored by scripts/gen-proto.mjs),
// typed promise clients with a deadline on every call, servers whose handlers are async functions
// that throw DomainError, and the standard grpc.health.v1 service.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { MethodDefinition } from '@grpc/proto-loader';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import { fileURLToPath } from 'node:url';
import { DomainError, fromGrpcError, toGrpcError } from './errors.js';
import type { Logger } from './logger.js';
import type { ProtoGrpcType as AuthProto } from './generated/auth.js';
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

/** Adapts async handlers to grpc-js: results go to the callback, thrown errors through toGrpcError. */
export function implement<D extends ServiceDefinition>(
  def: D,
  handlers: Handlers<D>,
  logger: Logger,
): grpc.UntypedServiceImplementation {
  const impl: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(def) as [string, AnyMethod][]) {
    const handler = (handlers as Record<string, (req: unknown, ctx: CallContext) => Promise<unknown>>)[name];
    if (!handler) throw new Error(`no handler for ${method.path}`);
    impl[name] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      handler(call.request, contextOf(call)).then(
        (res) => callback(null, res),
        (err: unknown) => {
          if (!(err instanceof DomainError) || err.code === 'internal') {
            logger.error({ err, method: method.path }, 'gRPC handler failed');
          }
          callback(toGrpcError(err));
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
};

/** Target for an address: "host:port" becomes dns:///host:port so round_robin sees every address. */
export function grpcTarget(address: string): string {
  return /^[a-z]+:/.test(address) && !/^[^:]+:\d+$/.test(address) ? address : `dns:///${address}`;
}

/**
 * A promise-returning client for a service definition. Every call carries a deadline (the call's
 * timeoutMs or the client's default) and rejects with a DomainError (fromGrpcError).
 */
export function createClient<D extends ServiceDefinition>(
  def: D,
  address: string,
  defaultTimeoutMs: number,
): PromiseClient<D> {
  const channel = new grpc.Client(grpcTarget(address), grpc.credentials.createInsecure(), CLIENT_OPTIONS);
  const client: Record<string, unknown> = { close: () => channel.close() };
  for (const [name, method] of Object.entries(def) as [string, AnyMethod][]) {
    client[name] = (req: object, opts: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        const timeout = Math.max(1, opts.timeoutMs ?? defaultTimeoutMs);
        channel.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          req,
          opts.metadata ?? new grpc.Metadata(),
          { deadline: Date.now() + timeout },
          (err, res) => (err ? reject(fromGrpcError(err)) : resolve(res)),
        );
      });
  }
  return client as PromiseClient<D>;
}
