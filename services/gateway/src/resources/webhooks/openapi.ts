// Webhooks' part of the OpenAPI document: the endpoint routes (/v1/webhook-endpoints…), their
// schemas, and the top-level `webhooks` object (OpenAPI 3.1) describing each delivery a receiver
// gets, one per event type, with the Standard Webhooks headers.
import { EVENT_TYPES } from '@partner/shared/domain/events';
import {
  ALL_EVENTS,
  MAX_DESCRIPTION_LENGTH,
  MAX_URL_LENGTH,
  PING_EVENT_TYPE,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_DISABLED_REASONS,
  WEBHOOK_ENDPOINT_STATUSES,
} from '@partner/shared/domain/webhooks';
import { DEFAULT_ALLOWED_PORTS } from '@partner/shared/net/webhook-targets';
import { apiHeaders, authErrors, json, MUTATION_DESCRIPTION, mutationResponses, param, response, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';
import { endpointCreateSchema, endpointUpdateSchema, recoverSchema } from './routes.js';

const ENDPOINT_ID = 'we_019ab3e47c1d7b529a0e3f2d4c5b6a74';
const ENDPOINT_EXAMPLE = {
  endpointId: ENDPOINT_ID,
  url: 'https://hooks.broker.example/partner-events',
  eventTypes: ['submission.created', 'job.failed'],
  description: 'Production receiver',
  status: 'enabled',
  createdAt: '2026-11-23T22:15:04.123Z',
  updatedAt: '2026-11-23T22:15:04.123Z',
};
const DELIVERY_EXAMPLE = {
  deliveryId: 'whd_5f0c2b1e9d8a4c7b8e6f1a2b3c4d5e6f',
  eventId: 'evt_019ab3e47c1d7b529a0e3f2d4c5b6a73',
  eventType: 'submission.created',
  status: 'pending',
  attempts: 2,
  lastAttemptAt: '2026-11-23T22:15:09.301Z',
  nextAttemptAt: '2026-11-23T22:20:09.301Z',
  lastResponseStatus: 503,
  lastError: 'the receiver answered 503',
};
const CURSOR_EXAMPLE = 'AQAAAZqz5HwdAZqz5HwdAZqz5HwdAZqz5HwdAZqz5HwdAZqz5HwdAZq';

const timestamp = ref('Timestamp');

export const webhookSchemas: Record<string, Schema> = {
  WebhookEndpointId: { type: 'string', pattern: '^we_[0-9a-f]{32}$', description: 'Webhook endpoint id: `we_` and 32 lowercase hex characters.', examples: [ENDPOINT_ID] },
  WebhookEventType: {
    type: 'string',
    enum: [...EVENT_TYPES, ALL_EVENTS],
    description: 'An event type an endpoint subscribes to, or `*` (alone) for all of them.',
  },
  WebhookEndpoint: {
    type: 'object',
    additionalProperties: false,
    required: ['endpointId', 'url', 'eventTypes', 'description', 'status', 'createdAt', 'updatedAt'],
    properties: {
      endpointId: ref('WebhookEndpointId'),
      url: { type: 'string', format: 'uri', maxLength: MAX_URL_LENGTH, description: 'Where deliveries are POSTed.' },
      eventTypes: { type: 'array', items: ref('WebhookEventType'), minItems: 1 },
      description: { type: 'string', maxLength: MAX_DESCRIPTION_LENGTH },
      status: { type: 'string', enum: [...WEBHOOK_ENDPOINT_STATUSES] },
      disabledReason: {
        type: 'string',
        enum: [...WEBHOOK_DISABLED_REASONS],
        description: 'While disabled: `gone` (the receiver answered 410), `failing` (no success for 5 days while deliveries failed), `partner` (you disabled it).',
      },
      createdAt: timestamp,
      updatedAt: timestamp,
    },
    examples: [ENDPOINT_EXAMPLE],
  },
  WebhookEndpointCreate: { ...endpointCreateSchema, examples: [{ url: ENDPOINT_EXAMPLE.url, eventTypes: ENDPOINT_EXAMPLE.eventTypes, description: ENDPOINT_EXAMPLE.description }] },
  WebhookEndpointUpdate: { ...endpointUpdateSchema, examples: [{ status: 'enabled' }, { eventTypes: [ALL_EVENTS] }] },
  WebhookEndpointPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: { items: { type: 'array', items: ref('WebhookEndpoint') }, nextCursor: { type: ['string', 'null'] } },
    examples: [{ items: [ENDPOINT_EXAMPLE], nextCursor: null }],
  },
  WebhookEndpointDeleted: {
    type: 'object',
    additionalProperties: false,
    required: ['endpointId', 'deleted'],
    properties: { endpointId: ref('WebhookEndpointId'), deleted: { const: true } },
    examples: [{ endpointId: ENDPOINT_ID, deleted: true }],
  },
  WebhookSecret: {
    type: 'object',
    additionalProperties: false,
    required: ['secret'],
    properties: { secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$', description: '`whsec_` and the base64 of the key (Standard Webhooks).' } },
    examples: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw1iJp8Xd2hpk=' }],
  },
  WebhookSecretRotated: {
    type: 'object',
    additionalProperties: false,
    required: ['endpointId', 'rotatedAt', 'previousSecretExpiresAt'],
    description: 'The new secret signs from `rotatedAt`; the previous one signs beside it until `previousSecretExpiresAt`. Read the new one at `GET …/secret`.',
    properties: { endpointId: ref('WebhookEndpointId'), rotatedAt: timestamp, previousSecretExpiresAt: timestamp },
    examples: [{ endpointId: ENDPOINT_ID, rotatedAt: '2026-11-23T22:15:04.123Z', previousSecretExpiresAt: '2026-11-24T22:15:04.123Z' }],
  },
  WebhookRecover: { ...recoverSchema, examples: [{ since: '2026-11-22T00:00:00Z' }] },
  WebhookRecovered: {
    type: 'object',
    additionalProperties: false,
    required: ['endpointId', 'since', 'queued'],
    properties: { endpointId: ref('WebhookEndpointId'), since: timestamp, queued: { type: 'integer', minimum: 0, description: 'Deliveries queued (again).' } },
    examples: [{ endpointId: ENDPOINT_ID, since: '2026-11-22T00:00:00.000Z', queued: 42 }],
  },
  WebhookPinged: {
    type: 'object',
    additionalProperties: false,
    required: ['endpointId', 'eventId'],
    properties: { endpointId: ref('WebhookEndpointId'), eventId: ref('EventId') },
    examples: [{ endpointId: ENDPOINT_ID, eventId: 'evt_019ab3e47c1d7b529a0e3f2d4c5b6a75' }],
  },
  WebhookDelivery: {
    type: 'object',
    additionalProperties: false,
    required: ['deliveryId', 'eventId', 'eventType', 'status', 'attempts', 'lastAttemptAt'],
    properties: {
      deliveryId: { type: 'string', pattern: '^whd_[0-9a-f]{32}$' },
      eventId: ref('EventId'),
      eventType: { type: 'string', enum: [...EVENT_TYPES, PING_EVENT_TYPE] },
      status: { type: 'string', enum: [...WEBHOOK_DELIVERY_STATUSES] },
      attempts: { type: 'integer', minimum: 0 },
      lastAttemptAt: { oneOf: [timestamp, { type: 'null' }], description: 'Null before the first attempt.' },
      nextAttemptAt: { ...timestamp, description: 'While pending: when the next attempt is due.' },
      lastResponseStatus: { type: 'integer', description: 'The HTTP status of the last answer (absent when none was received).' },
      lastError: { type: 'string', description: 'Why the last attempt failed.' },
    },
    examples: [DELIVERY_EXAMPLE],
  },
  WebhookDeliveryPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: { items: { type: 'array', items: ref('WebhookDelivery') }, nextCursor: { type: ['string', 'null'] } },
    examples: [{ items: [DELIVERY_EXAMPLE], nextCursor: CURSOR_EXAMPLE }],
  },
};

const MUTATION_PARAMS = () => [param('IdempotencyKey'), param('Prefer'), param('PrincipalId')];

export function webhookPaths(): Obj {
  const idParam = { name: 'endpointId', in: 'path', required: true, description: 'The webhook endpoint id.', schema: ref('WebhookEndpointId') };
  const read = (summary: string, operationId: string, description: string, schema: Schema, extra: Obj[] = []): Obj => ({
    operationId,
    tags: ['Webhooks'],
    summary,
    description,
    parameters: [...extra, param('PrincipalId')],
    responses: { 200: { description: summary, headers: apiHeaders(), content: json(schema) }, 404: response('NotFound'), ...authErrors() },
  });
  const mutation = (summary: string, operationId: string, description: string, result: Schema, body?: Obj): Obj => ({
    operationId,
    tags: ['Webhooks'],
    summary,
    description: `${description} ${MUTATION_DESCRIPTION}`,
    parameters: MUTATION_PARAMS(),
    ...(body ? { requestBody: body } : {}),
    responses: mutationResponses(result, `${summary}:`, [413, 415]),
  });
  return {
    '/v1/webhook-endpoints': {
      get: {
        ...read(
          'List webhook endpoints',
          'listWebhookEndpoints',
          "The calling partner's endpoints, newest first (`webhooks/read`).",
          ref('WebhookEndpointPage'),
          [param('Limit'), param('Cursor')],
        ),
      },
      post: mutation(
        'Register a webhook endpoint',
        'createWebhookEndpoint',
        'Registers a URL to receive the events of `eventTypes` (or `["*"]`), signed per Standard Webhooks with the endpoint\'s secret ' +
          '(read it at `GET …/{endpointId}/secret`). `webhooks/write`. The URL must be `https` (`http` too in UAT), at most 2048 ' +
          `characters, without credentials, on a port the deployment allows (${DEFAULT_ALLOWED_PORTS.join(' and ')} unless it says otherwise; a URL without a port ` +
          'uses 443, or 80 for http), and its host must not be or resolve to a loopback, private, link-local, unique-local, ' +
          'multicast or unspecified address: otherwise 400 `validation_error` naming `url`, before any job. At most 16 endpoints per ' +
          'partner: the job fails `limit_exceeded` (422).',
        ref('WebhookEndpoint'),
        { required: true, content: json(ref('WebhookEndpointCreate')) },
      ),
    },
    '/v1/webhook-endpoints/{endpointId}': {
      parameters: [idParam],
      get: read('Read a webhook endpoint', 'getWebhookEndpoint', "One endpoint (`webhooks/read`); another partner's is 404.", ref('WebhookEndpoint')),
      patch: mutation(
        'Update a webhook endpoint',
        'updateWebhookEndpoint',
        'Changes the fields sent (`url`, `eventTypes`, `description`, `status`); a new `url` is checked as at registration (400 naming `url`). Disabling fails its pending deliveries; enabling starts ' +
          'a fresh count towards automatic disabling (use `recover` to send what was missed). `webhooks/write`.',
        ref('WebhookEndpoint'),
        { required: true, content: json(ref('WebhookEndpointUpdate')) },
      ),
      delete: mutation(
        'Delete a webhook endpoint',
        'deleteWebhookEndpoint',
        'Deletes the endpoint and its delivery log; nothing more is sent to it. `webhooks/write`.',
        ref('WebhookEndpointDeleted'),
      ),
    },
    '/v1/webhook-endpoints/{endpointId}/secret': {
      parameters: [idParam],
      get: read(
        "Read a webhook endpoint's secret",
        'getWebhookSecret',
        'The current signing secret (`webhooks/write`: whoever may change the endpoint may read it). Never in a job result, event or log.',
        ref('WebhookSecret'),
      ),
    },
    '/v1/webhook-endpoints/{endpointId}/secret/rotate': {
      parameters: [idParam],
      post: mutation(
        "Rotate a webhook endpoint's secret",
        'rotateWebhookSecret',
        'A new secret signs at once; the previous one keeps signing beside it (two `v1,` signatures) for 24 hours, so receivers can switch without missing a delivery. The result never contains a secret.',
        ref('WebhookSecretRotated'),
      ),
    },
    '/v1/webhook-endpoints/{endpointId}/deliveries': {
      parameters: [idParam],
      get: read(
        'List deliveries to a webhook endpoint',
        'listWebhookDeliveries',
        'The delivery log, newest first (`webhooks/read`): one delivery per event, with its attempts so far.',
        ref('WebhookDeliveryPage'),
        [
          param('Limit'),
          param('Cursor'),
          { name: 'status', in: 'query', description: 'Only deliveries in this state.', schema: { type: 'string', enum: [...WEBHOOK_DELIVERY_STATUSES] } },
          { name: 'eventId', in: 'query', description: 'Only the delivery of this event.', schema: ref('EventId') },
        ],
      ),
    },
    '/v1/webhook-endpoints/{endpointId}/recover': {
      parameters: [idParam],
      post: mutation(
        'Recover a webhook endpoint',
        'recoverWebhookEndpoint',
        'Sends again every stored event since `since` that the endpoint subscribes to (with the same `webhook-id` as before), and enables ' +
          'the endpoint if it was disabled. For after an outage of your receiver. `webhooks/write`.',
        ref('WebhookRecovered'),
        { required: true, content: json(ref('WebhookRecover')) },
      ),
    },
    '/v1/webhook-endpoints/{endpointId}/ping': {
      parameters: [idParam],
      post: mutation(
        'Ping a webhook endpoint',
        'pingWebhookEndpoint',
        'Sends a `webhook_endpoint.ping` event to this endpoint alone (not in the feed), to test a receiver. `webhooks/write`.',
        ref('WebhookPinged'),
      ),
    },
  };
}

const SIGNATURE_HEADERS: Obj = {
  'webhook-id': { required: true, description: 'The event id: identical on every retry. Dedupe on it.', schema: ref('EventId') },
  'webhook-timestamp': { required: true, description: 'Unix seconds when this attempt was signed. Refuse ones older than a few minutes.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'webhook-signature': {
    required: true,
    description:
      '`v1,<base64 of HMAC-SHA256("{webhook-id}.{webhook-timestamp}.{raw body}")>` keyed with the secret\'s decoded bytes; during a ' +
      'rotation two such entries separated by a space. Verify with a Standard Webhooks library.',
    schema: { type: 'string', examples: ['v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='] },
  },
};

/**
 * The top-level `webhooks` object: one delivery per event type, its `data` from `eventData` (every
 * resource's Resource.openapi.eventData; an object for a type none lists).
 */
export function webhookDeliveries(eventData: Readonly<Record<string, Schema>>): Obj {
  const eventDataOf = (type: string): Schema => eventData[type] ?? { type: 'object' };
  const types: string[] = [...EVENT_TYPES, PING_EVENT_TYPE];
  return Object.fromEntries(
    types.map((type) => [
      type,
      {
        post: {
          operationId: `deliver_${type.replace(/\./g, '_')}`,
          tags: ['Webhooks'],
          summary: `A \`${type}\` event`,
          description:
            `What a receiver subscribed to \`${type}\` gets: the event as the feed shows it, signed per Standard Webhooks. Answer 2xx within 10 s ` +
            '(do the work afterwards); anything else is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±20 %). A 410 disables ' +
            'the endpoint. Deliveries are at least once and unordered: dedupe on `webhook-id`.',
          parameters: Object.entries(SIGNATURE_HEADERS).map(([name, h]) => ({ name, in: 'header', ...(h as Obj) })),
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema:
                  type === PING_EVENT_TYPE
                    ? {
                        type: 'object',
                        required: ['id', 'type', 'timestamp', 'data'],
                        properties: { id: ref('EventId'), type: { const: PING_EVENT_TYPE }, timestamp, data: eventDataOf(type) },
                      }
                    : { allOf: [ref('Event'), { type: 'object', properties: { type: { const: type }, data: eventDataOf(type) } }] },
              },
            },
          },
          responses: {
            '2XX': { description: 'Received: the delivery succeeded.' },
            '410': { description: 'Gone: the endpoint is disabled at once.' },
            default: { description: 'Any other answer, a timeout or a connection error: the delivery is retried on the schedule.' },
          },
        },
      },
    ]),
  );
}
