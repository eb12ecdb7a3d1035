// gRPC service definitions: proto loading with one set of loader options (mirrored by
// scripts/gen-proto.mjs), loaded once per process, the services' fully qualified names, and the
// types the server, client and call-stream modules share (so none of them imports another for them).
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import type { ProtoGrpcType as AuthProto } from '../generated/auth.js';
import type { ProtoGrpcType as CallStreamProto } from '../generated/callstream.js';
import type { ProtoGrpcType as EventsProto } from '../generated/events.js';
import type { ProtoGrpcType as JobProto } from '../generated/job.js';
import type { ProtoGrpcType as PolicyProto } from '../generated/policy.js';
import type { ProtoGrpcType as SubmissionProto } from '../generated/submission.js';

export type AnyMethod = grpc.MethodDefinition<object, object>;

/** A service a gRPC server offers: its name (for grpc.health.v1), definition and implementation. */
export interface ServiceBinding {
  name: string;
  def: grpc.ServiceDefinition;
  impl: grpc.UntypedServiceImplementation;
}

/** Keep in step with the flags in scripts/gen-proto.mjs. */
export const PROTO_LOADER_OPTIONS = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

/** The repository's proto/ (the image copies it to the same place beside the packages). */
const PROTO_ROOT = fileURLToPath(new URL('../../../../proto/', import.meta.url));

function load<T>(file: string): T {
  const def = protoLoader.loadSync(file, { ...PROTO_LOADER_OPTIONS, includeDirs: [PROTO_ROOT] });
  return grpc.loadPackageDefinition(def) as unknown as T;
}

let defs: ReturnType<typeof loadAll> | undefined;
function loadAll() {
  return {
    auth: load<AuthProto>('partner/auth/v1/auth.proto').partner.auth.v1.AuthService.service,
    events: load<EventsProto>('partner/events/v1/events.proto').partner.events.v1.EventsService.service,
    job: load<JobProto>('partner/job/v1/job.proto').partner.job.v1.JobService.service,
    policy: load<PolicyProto>('partner/policy/v1/policy.proto').partner.policy.v1.PolicyService.service,
    submission: load<SubmissionProto>('partner/submission/v1/submission.proto').partner.submission.v1.SubmissionService
      .service,
    /** Not a service of its own: the transport every gRPC server offers for its hot unary calls (call-stream.ts). */
    callStream: load<CallStreamProto>('partner/callstream/v1/callstream.proto').partner.callstream.v1.CallStreamService.service,
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
  events: 'partner.events.v1.EventsService',
  job: 'partner.job.v1.JobService',
  policy: 'partner.policy.v1.PolicyService',
  submission: 'partner.submission.v1.SubmissionService',
} as const;
