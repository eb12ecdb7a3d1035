// What route modules get from the app: configuration, the authorization guard, the gRPC clients
// and the settlement waiters.
import type { Permission } from '@partner/shared/domain/permissions';
import type { PromiseClient } from '@partner/shared/grpc';
import type { serviceDefs } from '@partner/shared/grpc';
import type { GatewayConfig } from '../config.js';
import type { GatewayMiddleware } from '../context.js';
import type { SettlementWaiters } from '../settlement-waiters.js';
import type { ProductLookup } from '@partner/shared/domain/product-cache';
import type { ClientStates } from '../client-state.js';
import type { ConsoleAuth } from './console/cookie-auth.js';

type Defs = ReturnType<typeof serviceDefs>;

export interface Clients {
  auth: PromiseClient<Defs['auth']>;
  policy: PromiseClient<Defs['policy']>;
  submission: PromiseClient<Defs['submission']>;
  job: PromiseClient<Defs['job']>;
  events: PromiseClient<Defs['events']>;
}

export interface RouteDeps {
  config: GatewayConfig;
  clients: Clients;
  waiters: SettlementWaiters;
  guard(permission: Permission): GatewayMiddleware;
  /** Products with their requirements, cached (dropped at once when an admin command announces a change). */
  products: ProductLookup;
  /** True once SIGTERM started the drain: new uploads are refused (retryable), in-flight ones finish. */
  draining?: () => boolean;
  /** The partner console's sessions and the client states they are checked against (resources/console). */
  console?: { auth: ConsoleAuth; clientStates: ClientStates };
}
