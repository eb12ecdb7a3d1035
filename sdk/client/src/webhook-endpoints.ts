// Webhook endpoints (/v1/webhook-endpoints): their mutations are jobs like every other
// (mutations.ts); reading them, their signing secret, and their delivery log. Verifying a delivery
// is in webhooks.ts, beside the types.
import type { Mutations } from './mutations.js';
import type { CallOptions, MutationOptions } from './options.js';
import { paginate, seg, type Transport, type WithResponse } from './transport.js';
import type { Page, PageParams } from './types.js';
import type {
  WebhookDelivery,
  WebhookDeliveryListParams,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointDeleted,
  WebhookEndpointUpdate,
  WebhookPinged,
  WebhookRecovered,
  WebhookSecretRotated,
} from './webhooks.js';

const path = (endpointId: string, rest = ''): string => `/v1/webhook-endpoints/${seg(endpointId)}${rest}`;

export class WebhookEndpoints {
  constructor(
    private readonly transport: Transport,
    private readonly mutations: Mutations,
  ) {}

  async create(input: WebhookEndpointCreate, opts: MutationOptions): Promise<WithResponse<WebhookEndpoint>> {
    return this.mutations.mutate<WebhookEndpoint>(() => ({ method: 'POST', path: '/v1/webhook-endpoints', json: input }), opts);
  }

  async list(params: PageParams, opts: CallOptions): Promise<WithResponse<Page<WebhookEndpoint>>> {
    return (await this.transport.request<Page<WebhookEndpoint>>({ method: 'GET', path: '/v1/webhook-endpoints', query: { ...params }, ...opts })).body;
  }

  iterate(params: Omit<PageParams, 'cursor'>, opts: CallOptions): AsyncGenerator<WebhookEndpoint> {
    return paginate(params, (p) => this.list(p, opts));
  }

  async get(endpointId: string, opts: CallOptions): Promise<WithResponse<WebhookEndpoint>> {
    return (await this.transport.request<WebhookEndpoint>({ method: 'GET', path: path(endpointId), ...opts })).body;
  }

  async update(endpointId: string, changes: WebhookEndpointUpdate, opts: MutationOptions): Promise<WithResponse<WebhookEndpoint>> {
    return this.mutations.mutate<WebhookEndpoint>(() => ({ method: 'PATCH', path: path(endpointId), json: changes }), opts);
  }

  async delete(endpointId: string, opts: MutationOptions): Promise<WithResponse<WebhookEndpointDeleted>> {
    return this.mutations.mutate<WebhookEndpointDeleted>(() => ({ method: 'DELETE', path: path(endpointId) }), opts);
  }

  async secret(endpointId: string, opts: CallOptions): Promise<string> {
    return (await this.transport.request<{ secret: string }>({ method: 'GET', path: path(endpointId, '/secret'), ...opts })).body.secret;
  }

  async rotateSecret(endpointId: string, opts: MutationOptions): Promise<WithResponse<WebhookSecretRotated>> {
    return this.mutations.mutate<WebhookSecretRotated>(() => ({ method: 'POST', path: path(endpointId, '/secret/rotate'), json: {} }), opts);
  }

  async deliveries(endpointId: string, params: WebhookDeliveryListParams, opts: CallOptions): Promise<WithResponse<Page<WebhookDelivery>>> {
    return (await this.transport.request<Page<WebhookDelivery>>({ method: 'GET', path: path(endpointId, '/deliveries'), query: { ...params }, ...opts })).body;
  }

  iterateDeliveries(endpointId: string, params: Omit<WebhookDeliveryListParams, 'cursor'>, opts: CallOptions): AsyncGenerator<WebhookDelivery> {
    return paginate(params, (p) => this.deliveries(endpointId, p, opts));
  }

  async recover(endpointId: string, since: string | Date, opts: MutationOptions): Promise<WithResponse<WebhookRecovered>> {
    const body = { since: since instanceof Date ? since.toISOString() : since };
    return this.mutations.mutate<WebhookRecovered>(() => ({ method: 'POST', path: path(endpointId, '/recover'), json: body }), opts);
  }

  async ping(endpointId: string, opts: MutationOptions): Promise<WithResponse<WebhookPinged>> {
    return this.mutations.mutate<WebhookPinged>(() => ({ method: 'POST', path: path(endpointId, '/ping'), json: {} }), opts);
  }
}
