// Webhook endpoints (client.webhookEndpoints, /v1/webhook-endpoints): their mutations are jobs like
// every other (mutations.ts); reading them, their signing secret, and their delivery log. The types
// are generated from the OpenAPI document (wire-types.ts); verifying a delivery is webhooks.ts.
import type { Connection } from './connection.js';
import type { CallOptions, MutationOptions } from './options.js';
import { paginate, seg, type WithResponse } from './transport.js';
import type { Page, PageParams } from './types.js';
import { webhooks } from './webhooks.js';
import type * as wire from './wire-types.js';
import type {
  ListWebhookDeliveriesQuery,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointDeleted,
  WebhookEndpointUpdate,
  WebhookPinged,
  WebhookRecovered,
  WebhookSecretRotated,
} from './wire-types.js';

export type {
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointDeleted,
  WebhookEndpointUpdate,
  WebhookEventType,
  WebhookPinged,
  WebhookRecovered,
  WebhookSecretRotated,
} from './wire-types.js';

/** The endpoint just created, with the secret that signs its deliveries: store it now (the SDK makes one when the create leaves it out). */
export interface CreatedWebhookEndpoint extends wire.WebhookEndpoint {
  secret: string;
}

/** GET /v1/webhook-endpoints/{id}/deliveries's filters. */
export type WebhookDeliveryListParams = ListWebhookDeliveriesQuery;

const path = (endpointId: string, rest = ''): string => `/v1/webhook-endpoints/${seg(endpointId)}${rest}`;

export class WebhookEndpoints {
  constructor(private readonly connection: Connection) {}

  /**
   * POST /v1/webhook-endpoints: resolves with the endpoint once the job has succeeded, and its signing
   * `secret` (yours, or made here when input.secret is left out): store it, it verifies every delivery.
   * The secret is made once per call, so every resend of the request carries the same one.
   */
  async create(input: WebhookEndpointCreate, opts: MutationOptions = {}): Promise<WithResponse<CreatedWebhookEndpoint>> {
    const json = { ...input, secret: input.secret ?? webhooks.newSecret() };
    const endpoint = await this.connection.mutations.mutate<WebhookEndpoint>(() => ({ method: 'POST', path: '/v1/webhook-endpoints', json }), opts);
    return Object.assign(endpoint, { secret: json.secret });
  }

  /** GET /v1/webhook-endpoints: one page, newest first. */
  async list(params: PageParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<WebhookEndpoint>>> {
    return (await this.connection.transport.request<Page<WebhookEndpoint>>({ method: 'GET', path: '/v1/webhook-endpoints', query: { ...params }, ...opts })).body;
  }

  /** Every webhook endpoint, page after page. */
  iterate(params: Omit<PageParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<WebhookEndpoint> {
    return paginate(params, (p) => this.list(p, opts));
  }

  /** GET /v1/webhook-endpoints/{id}. */
  async get(endpointId: string, opts: CallOptions = {}): Promise<WithResponse<WebhookEndpoint>> {
    return (await this.connection.transport.request<WebhookEndpoint>({ method: 'GET', path: path(endpointId), ...opts })).body;
  }

  /** PATCH /v1/webhook-endpoints/{id} (url, eventTypes, description, status), as a job. */
  async update(endpointId: string, changes: WebhookEndpointUpdate, opts: MutationOptions = {}): Promise<WithResponse<WebhookEndpoint>> {
    return this.connection.mutations.mutate<WebhookEndpoint>(() => ({ method: 'PATCH', path: path(endpointId), json: changes }), opts);
  }

  /** DELETE /v1/webhook-endpoints/{id}, as a job. */
  async delete(endpointId: string, opts: MutationOptions = {}): Promise<WithResponse<WebhookEndpointDeleted>> {
    return this.connection.mutations.mutate<WebhookEndpointDeleted>(() => ({ method: 'DELETE', path: path(endpointId) }), opts);
  }

  /** GET /v1/webhook-endpoints/{id}/secret: the `whsec_…` secret deliveries are signed with (needs webhooks/write). */
  async secret(endpointId: string, opts: CallOptions = {}): Promise<string> {
    return (await this.connection.transport.request<wire.WebhookSecret>({ method: 'GET', path: path(endpointId, '/secret'), ...opts })).body.secret;
  }

  /** POST /v1/webhook-endpoints/{id}/secret/rotate, as a job: the new secret signs at once, the old one beside it for 24 h. */
  async rotateSecret(endpointId: string, opts: MutationOptions = {}): Promise<WithResponse<WebhookSecretRotated>> {
    return this.connection.mutations.mutate<WebhookSecretRotated>(() => ({ method: 'POST', path: path(endpointId, '/secret/rotate'), json: {} }), opts);
  }

  /** GET /v1/webhook-endpoints/{id}/deliveries: one page of the delivery log, newest first. */
  async deliveries(endpointId: string, params: WebhookDeliveryListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<WebhookDelivery>>> {
    return (await this.connection.transport.request<Page<WebhookDelivery>>({ method: 'GET', path: path(endpointId, '/deliveries'), query: { ...params }, ...opts })).body;
  }

  /** Every delivery to an endpoint matching the filters, page after page. */
  iterateDeliveries(endpointId: string, params: Omit<WebhookDeliveryListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<WebhookDelivery> {
    return paginate(params, (p) => this.deliveries(endpointId, p, opts));
  }

  /** POST /v1/webhook-endpoints/{id}/recover, as a job: sends every matching event since then again (and enables the endpoint). */
  async recover(endpointId: string, since: string | Date, opts: MutationOptions = {}): Promise<WithResponse<WebhookRecovered>> {
    const body: wire.WebhookRecover = { since: since instanceof Date ? since.toISOString() : since };
    return this.connection.mutations.mutate<WebhookRecovered>(() => ({ method: 'POST', path: path(endpointId, '/recover'), json: body }), opts);
  }

  /** POST /v1/webhook-endpoints/{id}/ping, as a job: sends a webhook_endpoint.ping event to that endpoint alone. */
  async ping(endpointId: string, opts: MutationOptions = {}): Promise<WithResponse<WebhookPinged>> {
    return this.connection.mutations.mutate<WebhookPinged>(() => ({ method: 'POST', path: path(endpointId, '/ping'), json: {} }), opts);
  }
}
