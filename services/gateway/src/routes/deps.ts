// What route modules get from the app: the authorization guard and the gRPC clients.
import type { Permission } from '@partner/shared/permissions';
import type { PromiseClient } from '@partner/shared/grpc';
import type { serviceDefs } from '@partner/shared/grpc';
import type { GatewayConfig } from '../config.js';
import type { GatewayMiddleware } from '../context.js';

type Defs = ReturnType<typeof serviceDefs>;

export interface Clients {
  auth: PromiseClient<Defs['auth']>;
  policy: PromiseClient<Defs['policy']>;
  submission: PromiseClient<Defs['submission']>;
  job: PromiseClient<Defs['job']>;
}

export interface RouteDeps {
  config: GatewayConfig;
  clients: Clients;
  guard(permission: Permission): GatewayMiddleware;
}
