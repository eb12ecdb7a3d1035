// Webhooks (docs/api.md, "Webhooks"): what endpoints subscribe to, their secrets, and the Standard
// Webhooks signature (https://www.standardwebhooks.com). The target rules against SSRF (addresses,
// ports, the DNS-checked connect) are net/webhook-targets.ts.
import { createHmac, randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { EVENT_TYPES } from './events.js';
import type { WebhookDeliveryStatus__Output } from '../generated/partner/events/v1/WebhookDeliveryStatus.js';
import type { WebhookEndpoint__Output } from '../generated/partner/events/v1/WebhookEndpoint.js';
import type { WebhookEndpointDisabledReason__Output } from '../generated/partner/events/v1/WebhookEndpointDisabledReason.js';
import type { WebhookEndpointStatus__Output } from '../generated/partner/events/v1/WebhookEndpointStatus.js';
import { protoEnum } from './proto-enums.js';

/** What an endpoint can subscribe to: every feed event type (or "*" for all). */
export const WEBHOOK_EVENT_TYPES = EVENT_TYPES;
/** Sent by POST …/ping to one endpoint alone; not in the feed, not subscribable. */
export const PING_EVENT_TYPE = 'webhook_endpoint.ping';
export const ALL_EVENTS = '*';

export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;
/** Response bodies are read up to this many bytes, and logged truncated. */
export const RESPONSE_BODY_LIMIT = 64 * 1024;
export const USER_AGENT = 'PartnerSubmissionService-Webhooks/1.0';

const hexId = (prefix: string) => `${prefix}_${uuidv7().replace(/-/g, '')}`;
export const newEndpointId = (): string => hexId('we');
export const isEndpointId = (s: string): boolean => /^we_[0-9a-f]{32}$/.test(s);

// The statuses (the API's names; the proto's WEBHOOK_*; the text of the webhook tables' columns).
export const WEBHOOK_ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookEndpointStatusName = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];
export const WEBHOOK_ENDPOINT_STATUS = protoEnum<WebhookEndpointStatusName, WebhookEndpointStatus__Output>('WEBHOOK_ENDPOINT_STATUS_', WEBHOOK_ENDPOINT_STATUSES);
/** Why an endpoint is disabled: the receiver answered 410, it kept failing, or the partner disabled it. */
export const WEBHOOK_DISABLED_REASONS = ['gone', 'failing', 'partner'] as const;
export type WebhookDisabledReasonName = (typeof WEBHOOK_DISABLED_REASONS)[number];
export const WEBHOOK_DISABLED_REASON = protoEnum<WebhookDisabledReasonName, WebhookEndpointDisabledReason__Output>(
  'WEBHOOK_ENDPOINT_DISABLED_REASON_',
  WEBHOOK_DISABLED_REASONS,
);
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatusName = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
export const WEBHOOK_DELIVERY_STATUS = protoEnum<WebhookDeliveryStatusName, WebhookDeliveryStatus__Output>('WEBHOOK_DELIVERY_STATUS_', WEBHOOK_DELIVERY_STATUSES);

/** An endpoint as the API shows it (never with its secret). */
export interface WebhookEndpointView {
  endpointId: string;
  url: string;
  eventTypes: string[];
  description: string;
  status: WebhookEndpointStatusName;
  disabledReason?: WebhookDisabledReasonName;
  createdAt: string;
  updatedAt: string;
}

/** An endpoint as the API shows it, from the events service's answer (gateway reads and job results alike). */
export function endpointRecord(e: WebhookEndpoint__Output): WebhookEndpointView {
  const disabledReason = WEBHOOK_DISABLED_REASON.fromProto(e.disabledReason);
  return {
    endpointId: e.endpointId,
    url: e.url,
    eventTypes: e.eventTypes,
    description: e.description,
    status: WEBHOOK_ENDPOINT_STATUS.fromProto(e.status) ?? 'enabled',
    ...(disabledReason ? { disabledReason } : {}),
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks' secret format). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** A secret a partner brings (POST /v1/webhook-endpoints `secret`): `whsec_` + base64 of this many bytes. */
export const PARTNER_SECRET_BYTES = { min: 24, max: 64 } as const;
/** The JSON Schema of that secret's form (the byte count is checked by secretProblem). */
export const PARTNER_SECRET_PATTERN = '^whsec_[A-Za-z0-9+/]+={0,2}$';

/**
 * Why a partner's secret is refused, or undefined: `whsec_`, then canonical standard base64 (padded,
 * as Buffer#toString('base64') writes it) of PARTNER_SECRET_BYTES.min..max bytes.
 */
export function secretProblem(secret: string): string | undefined {
  const { min, max } = PARTNER_SECRET_BYTES;
  const form = `must be whsec_ followed by the standard base64 of ${min} to ${max} random bytes`;
  if (!new RegExp(PARTNER_SECRET_PATTERN).test(secret)) return form;
  const b64 = secret.slice('whsec_'.length);
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.toString('base64') !== b64) return form;
  if (bytes.length < min || bytes.length > max) return `${form} (it has ${bytes.length})`;
  return undefined;
}

/** The key bytes of a `whsec_…` secret. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/**
 * The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` for each
 * secret that signs (two during a rotation), separated by spaces.
 */
export function webhookSignature(secrets: readonly string[], id: string, timestampS: number, body: string): string {
  const content = `${id}.${timestampS}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', secretKey(s)).update(content).digest('base64')}`).join(' ');
}
