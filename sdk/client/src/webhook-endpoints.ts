// Webhook endpoints (/v1/webhook-endpoints): their mutations are jobs like every other
// (mutations.ts); reading them, their signing secret, and their delivery log. Verifying a delivery
// is in webhooks.ts, beside the types.
import type { Mutations } from './mutations.js';
import type { CallOptions, MutationOptions } from './options.js';
import { paginate, seg, type Transport, type WithResponse } from './transport.js';
import type { Page, PageParams } from './types.js';
import type * as wh from './webhooks.js';
import { webhooks } from './webhooks.js';

const path = (endpointId: string, rest = ''): string => `/v1/webhook-endpoints/${seg(endpointId)}${rest}`;

export class WebhookEndpoints {
  constructor(
    private readonly transport: Transport,
    private readonly mutations: Mutations,
  ) {}

  /** The secret is made here, once per call, so every resend of the request carries the same one. */
  async create(input: wh.WebhookEndpointCreate, opts: MutationOptions): Promise<WithResponse<wh.CreatedWebhookEndpoint>> {
    const json = { ...input, secret: input.secret ?? webhooks.newSecret() };
    const endpoint = await this.mutations.mutate<wh.WebhookEndpoint>(() => ({ method: 'POST', path: '/v1/webhook-endpoints', json }), opts);
    return Object.assign(endpoint, { secret: json.secret });
  }

  async list(params: PageParams, opts: CallOptions): Promise<WithResponse<Page<wh.WebhookEndpoint>>> {
    return (await this.transport.request<Page<wh.WebhookEndpoint>>({ method: 'GET', path: '/v1/webhook-endpoints', query: { ...params }, ...opts })).body;
  }

  iterate(params: Omit<PageParams, 'cursor'>, opts: CallOptions): AsyncGenerator<wh.WebhookEndpoint> {
    return paginate(params, (p) => this.list(p, opts));
  }

  async get(endpointId: string, opts: CallOptions): Promise<WithResponse<wh.WebhookEndpoint>> {
    return (await this.transport.request<wh.WebhookEndpoint>({ method: 'GET', path: path(endpointId), ...opts })).body;
  }

  async update(endpointId: string, changes: wh.WebhookEndpointUpdate, opts: MutationOptions): Promise<WithResponse<wh.WebhookEndpoint>> {
    return this.mutations.mutate<wh.WebhookEndpoint>(() => ({ method: 'PATCH', path: path(endpointId), json: changes }), opts);
  }

  async delete(endpointId: string, opts: MutationOptions): Promise<WithResponse<wh.WebhookEndpointDeleted>> {
    return this.mutations.mutate<wh.WebhookEndpointDeleted>(() => ({ method: 'DELETE', path: path(endpointId) }), opts);
  }

  async secret(endpointId: string, opts: CallOptions): Promise<string> {
    return (await this.transport.request<{ secret: string }>({ method: 'GET', path: path(endpointId, '/secret'), ...opts })).body.secret;
  }

  async rotateSecret(endpointId: string, opts: MutationOptions): Promise<WithResponse<wh.WebhookSecretRotated>> {
    return this.mutations.mutate<wh.WebhookSecretRotated>(() => ({ method: 'POST', path: path(endpointId, '/secret/rotate'), json: {} }), opts);
  }

  async deliveries(endpointId: string, params: wh.WebhookDeliveryListParams, opts: CallOptions): Promise<WithResponse<Page<wh.WebhookDelivery>>> {
    return (await this.transport.request<Page<wh.WebhookDelivery>>({ method: 'GET', path: path(endpointId, '/deliveries'), query: { ...params }, ...opts })).body;
  }

  iterateDeliveries(endpointId: string, params: Omit<wh.WebhookDeliveryListParams, 'cursor'>, opts: CallOptions): AsyncGenerator<wh.WebhookDelivery> {
    return paginate(params, (p) => this.deliveries(endpointId, p, opts));
  }

  async recover(endpointId: string, since: string | Date, opts: MutationOptions): Promise<WithResponse<wh.WebhookRecovered>> {
    const body = { since: since instanceof Date ? since.toISOString() : since };
    return this.mutations.mutate<wh.WebhookRecovered>(() => ({ method: 'POST', path: path(endpointId, '/recover'), json: body }), opts);
  }

  async ping(endpointId: string, opts: MutationOptions): Promise<WithResponse<wh.WebhookPinged>> {
    return this.mutations.mutate<wh.WebhookPinged>(() => ({ method: 'POST', path: path(endpointId, '/ping'), json: {} }), opts);
  }
}
