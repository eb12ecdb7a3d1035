// Webhook endpoints (/v1/webhook-endpoints…: registered, changed and deleted by jobs, with their
// delivery log), and the deliveries a receiver gets (the document's top-level `webhooks`).
import { PING_EVENT_TYPE } from '@partner/shared/domain/webhooks';
import { ref } from '../../openapi/schemas.js';
import type { Resource } from '../resource.js';
import { webhookDeliveries, webhookPaths, webhookSchemas } from './openapi.js';
import { webhookRoutes } from './routes.js';

export const webhooks: Resource = {
  name: 'webhooks', routes: webhookRoutes,
  openapi: {
    tag: { name: 'Webhooks', description: 'Endpoints that receive the events as signed HTTP deliveries (Standard Webhooks), and their delivery log.' },
    paths: webhookPaths, schemas: webhookSchemas,
    jobResults: [ref('WebhookEndpoint'), ref('WebhookEndpointDeleted'), ref('WebhookSecretRotated'), ref('WebhookRecovered'), ref('WebhookPinged')],
    eventData: {
      'webhook_endpoint.disabled': ref('WebhookEndpoint'),
      [PING_EVENT_TYPE]: { type: 'object', additionalProperties: false, required: ['endpointId'], properties: { endpointId: ref('WebhookEndpointId') } },
    },
    webhooks: ({ eventData }) => webhookDeliveries(eventData),
  },
};
