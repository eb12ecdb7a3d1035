// gRPC EventsService's webhook methods: the endpoint mutations the worker runs inside jobs, and the
// reads the gateway answers with (endpoints, the secret, the delivery log). The gateway has checked
// the request's shape and the URL's target; these re-check what the database must never hold. The
// statuses travel as proto enums and are the API's names (the tables' text) from here on.
import { DomainError } from '@partner/shared/domain/errors';
import { loadCursorCodec } from '@partner/shared/db/cursor-keys';
import { dbError, type Pool } from '@partner/shared/db/pg';
import type { ProtoEnum } from '@partner/shared/domain/proto-enums';
import {
  ALL_EVENTS,
  isEndpointId,
  secretProblem,
  WEBHOOK_DELIVERY_STATUS,
  WEBHOOK_DISABLED_REASON,
  WEBHOOK_ENDPOINT_STATUS,
  WEBHOOK_EVENT_TYPES,
  type WebhookEndpointView,
} from '@partner/shared/domain/webhooks';
import type { WebhookDeliveryStatus__Output } from '@partner/shared/generated/partner/events/v1/WebhookDeliveryStatus';
import type { WebhookEndpoint } from '@partner/shared/generated/partner/events/v1/WebhookEndpoint';
import type { WebhookEndpointStatus__Output } from '@partner/shared/generated/partner/events/v1/WebhookEndpointStatus';
import type { WebhookDelivery } from '@partner/shared/generated/partner/events/v1/WebhookDelivery';
import type { Owner } from '@partner/shared/domain/list-page';
import type { Logger } from '@partner/shared/telemetry/logger';
import * as repo from './repo.js';
import { sealAtRest } from './secrets.js';

export interface WebhookRpcOptions {
  /** Endpoints per partner (WEBHOOK_ENDPOINT_LIMIT). */
  endpointLimit: number;
  /** How long the previous secret keeps signing after a rotation. */
  secretOverlapMs: number;
  /** Wakes the dispatchers after deliveries were queued outside the feed writer (ping, recover). */
  notifyDue(): void;
  /** The key-encryption keys (AUTH_KEY_ENCRYPTION_KEY), newest first: the newest seals the signing secrets, all open them. */
  keks: readonly Buffer[];
  logger: Logger;
}

function ownerOf(o: { tenantId: string; partnerId: string } | null | undefined): Owner {
  if (!o?.tenantId || !o.partnerId) throw new DomainError('validation_error', 'owner is required');
  return { tenantId: o.tenantId, partnerId: o.partnerId };
}

function endpointIdOf(id: string): string {
  if (!isEndpointId(id)) throw new DomainError('not_found', 'webhook endpoint not found');
  return id;
}

function eventTypesOf(types: string[]): string[] {
  const known: readonly string[] = WEBHOOK_EVENT_TYPES;
  const ok = types.length > 0 && (types.length === 1 && types[0] === ALL_EVENTS ? true : types.every((t) => known.includes(t)));
  if (!ok) throw new DomainError('validation_error', 'invalid event types', { details: [{ field: 'eventTypes', issue: 'must list known event types or be ["*"]' }] });
  return [...new Set(types)];
}

/**
 * The name of an enum value a request carries; undefined for UNSPECIFIED. The gateway has checked
 * the API's value: a value unknown here comes from a newer build, and is refused rather than ignored.
 */
function nameOf<Name extends string>(e: ProtoEnum<Name, string>, value: string | number, field: string): Name | undefined {
  if (value === 0 || (typeof value === 'string' && value.endsWith('_UNSPECIFIED'))) return undefined;
  const name = e.fromProto(value);
  if (name === undefined) throw new DomainError('validation_error', `unknown ${field}`, { details: [{ field, issue: `must be one of: ${e.names.join(', ')}` }] });
  return name;
}

const toProto = (e: WebhookEndpointView): WebhookEndpoint => ({
  endpointId: e.endpointId,
  url: e.url,
  eventTypes: e.eventTypes,
  description: e.description,
  status: WEBHOOK_ENDPOINT_STATUS.toProto(e.status),
  disabledReason: e.disabledReason ? WEBHOOK_DISABLED_REASON.toProto(e.disabledReason) : 'WEBHOOK_ENDPOINT_DISABLED_REASON_UNSPECIFIED',
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
});

const deliveryToProto = (d: repo.DeliveryRow): WebhookDelivery => ({
  deliveryId: d.delivery_id,
  eventId: d.event_id,
  eventType: d.event_type,
  status: WEBHOOK_DELIVERY_STATUS.toProto(d.status),
  attempts: d.attempts,
  lastAttemptAt: d.last_attempt_at?.toISOString() ?? '',
  nextAttemptAt: d.status === 'pending' && d.next_attempt_at ? d.next_attempt_at.toISOString() : '',
  lastResponseStatus: d.last_response_status ?? 0,
  lastError: d.last_error ?? '',
});

/** The webhook half of EventsService's implementation. */
export async function webhookHandlers(pool: Pool, opts: WebhookRpcOptions) {
  // Before any secret is read: plaintext secrets from before sealing are sealed, secrets sealed under
  // an older KEK sealed again under the newest (an unknown KEK fails the start, naming the setting).
  const sealed = await sealAtRest(pool, opts.keks);
  if (sealed.sealed + sealed.resealed + sealed.dropped > 0) opts.logger.info(sealed, 'webhook signing secrets sealed at rest under the newest key-encryption key');
  const endpointCursors = await loadCursorCodec(pool, [], repo.ENDPOINT_CURSOR_CONTEXT, repo.ENDPOINT_IDS);
  const deliveryCursors = await loadCursorCodec(pool, [], repo.DELIVERY_CURSOR_CONTEXT, repo.DELIVERY_IDS);
  const db = <T>(p: Promise<T>): Promise<T> => p.catch(dbError);

  return {
    CreateWebhookEndpoint: async (req: {
      jobId: string;
      owner: { tenantId: string; partnerId: string } | null;
      url: string;
      eventTypes: string[];
      description: string;
      secret: string;
    }) => {
      if (!req.url) throw new DomainError('validation_error', 'url is required', { details: [{ field: 'url', issue: 'is required' }] });
      const secretIssue = req.secret ? secretProblem(req.secret) : undefined;
      if (secretIssue) throw new DomainError('validation_error', 'invalid secret', { details: [{ field: 'secret', issue: secretIssue }] });
      const endpoint = await db(
        repo.createEndpoint(pool, {
          jobId: req.jobId,
          owner: ownerOf(req.owner),
          url: req.url,
          eventTypes: eventTypesOf(req.eventTypes),
          description: req.description,
          ...(req.secret ? { secret: req.secret } : {}),
          limit: opts.endpointLimit,
          keks: opts.keks,
        }),
      );
      return { endpoint: toProto(endpoint) };
    },
    UpdateWebhookEndpoint: async (req: {
      jobId: string;
      owner: { tenantId: string; partnerId: string } | null;
      endpointId: string;
      url?: string;
      eventTypes: string[];
      setEventTypes: boolean;
      description?: string;
      status: WebhookEndpointStatus__Output;
    }) => {
      const status = nameOf(WEBHOOK_ENDPOINT_STATUS, req.status, 'status');
      const changes: repo.EndpointChanges = {
        ...(req.url !== undefined ? { url: req.url } : {}),
        ...(req.setEventTypes ? { eventTypes: eventTypesOf(req.eventTypes) } : {}),
        ...(req.description !== undefined ? { description: req.description } : {}),
        ...(status !== undefined ? { status } : {}),
      };
      const endpoint = await db(repo.updateEndpoint(pool, { jobId: req.jobId, owner: ownerOf(req.owner), endpointId: endpointIdOf(req.endpointId), changes }));
      return { endpoint: toProto(endpoint) };
    },
    DeleteWebhookEndpoint: async (req: { jobId: string; owner: { tenantId: string; partnerId: string } | null; endpointId: string }) =>
      db(repo.deleteEndpoint(pool, { jobId: req.jobId, owner: ownerOf(req.owner), endpointId: endpointIdOf(req.endpointId) })),
    RotateWebhookSecret: async (req: { jobId: string; owner: { tenantId: string; partnerId: string } | null; endpointId: string }) =>
      db(repo.rotateSecret(pool, { jobId: req.jobId, owner: ownerOf(req.owner), endpointId: endpointIdOf(req.endpointId), overlapMs: opts.secretOverlapMs, keks: opts.keks })),
    RecoverWebhookEndpoint: async (req: { jobId: string; owner: { tenantId: string; partnerId: string } | null; endpointId: string; since: string }) => {
      if (Number.isNaN(Date.parse(req.since))) {
        throw new DomainError('validation_error', 'invalid since', { details: [{ field: 'since', issue: 'must be an RFC 3339 timestamp' }] });
      }
      const out = await db(repo.recoverEndpoint(pool, { jobId: req.jobId, owner: ownerOf(req.owner), endpointId: endpointIdOf(req.endpointId), since: req.since }));
      opts.notifyDue();
      return out;
    },
    PingWebhookEndpoint: async (req: { jobId: string; owner: { tenantId: string; partnerId: string } | null; endpointId: string }) => {
      const out = await db(repo.pingEndpoint(pool, { jobId: req.jobId, owner: ownerOf(req.owner), endpointId: endpointIdOf(req.endpointId) }));
      opts.notifyDue();
      return out;
    },
    GetWebhookEndpoint: async (req: { owner: { tenantId: string; partnerId: string } | null; endpointId: string }) => ({
      endpoint: toProto(repo.endpointView(await db(repo.getEndpoint(pool, ownerOf(req.owner), endpointIdOf(req.endpointId))))),
    }),
    GetWebhookSecret: async (req: { owner: { tenantId: string; partnerId: string } | null; endpointId: string }) => ({
      secret: await db(repo.getSecret(pool, ownerOf(req.owner), endpointIdOf(req.endpointId), opts.keks)),
    }),
    ListWebhookEndpoints: async (req: { owner: { tenantId: string; partnerId: string } | null; pageToken: string; pageSize: number }) => {
      const page = await db(repo.listEndpoints(pool, { owner: ownerOf(req.owner), pageToken: req.pageToken, pageSize: req.pageSize }, endpointCursors));
      return { endpoints: page.rows.map((r) => toProto(repo.endpointView(r))), nextPageToken: page.nextCursor };
    },
    ListWebhookDeliveries: async (req: {
      owner: { tenantId: string; partnerId: string } | null;
      endpointId: string;
      pageToken: string;
      pageSize: number;
      status: WebhookDeliveryStatus__Output;
      eventId: string;
    }) => {
      const page = await db(
        repo.listDeliveries(
          pool,
          { owner: ownerOf(req.owner), endpointId: endpointIdOf(req.endpointId), pageToken: req.pageToken, pageSize: req.pageSize, status: nameOf(WEBHOOK_DELIVERY_STATUS, req.status, 'status'), eventId: req.eventId },
          deliveryCursors,
        ),
      );
      return { deliveries: page.rows.map(deliveryToProto), nextPageToken: page.nextCursor };
    },
  };
}

/** Removes deliveries (and their attempts) past the event retention, in one batch; returns how many. */
export async function sweepDeliveries(pool: Pool, retentionMs: number, batch: number): Promise<number> {
  const r = await pool.query(
    `DELETE FROM webhook_deliveries WHERE delivery_id IN (
       SELECT delivery_id FROM webhook_deliveries
        WHERE created_at < now() - make_interval(secs => $1::double precision / 1000) AND status <> 'pending'
        LIMIT $2)`,
    [retentionMs, batch],
  );
  return r.rowCount ?? 0;
}
