// Webhook endpoints (docs/api.md, "Webhooks"): the mutations (create, update, delete, rotate the
// secret, recover, ping; webhooks/write) run as jobs like every other; the reads (webhooks/read; the
// secret needs webhooks/write) are answered by the events service. A target URL is checked here,
// before any job exists: its form, its port (WEBHOOK_ALLOWED_PORTS), and the addresses its host
// resolves to (SSRF): 400 naming `url`; the dispatcher checks port and address again at every delivery.
import type Router from '@koa/router';
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';
import { isEventId } from '@partner/shared/domain/events';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { parseTimestamp } from '@partner/shared/domain/time';
import {
  ALL_EVENTS,
  endpointRecord,
  isEndpointId,
  MAX_DESCRIPTION_LENGTH,
  PARTNER_SECRET_PATTERN,
  secretProblem,
  MAX_URL_LENGTH,
  WEBHOOK_DELIVERY_STATUS,
  WEBHOOK_ENDPOINT_STATUSES,
  WEBHOOK_EVENT_TYPES,
  type WebhookEndpointStatusName,
} from '@partner/shared/domain/webhooks';
import { DEFAULT_ALLOWED_PORTS, targetProblems, type TargetRules } from '@partner/shared/net/webhook-targets';
import type { WebhookDelivery__Output } from '@partner/shared/generated/partner/events/v1/WebhookDelivery';
import { grpcOptions, ownerOf, type GatewayContext, type GatewayState } from '../../context.js';
import { readJson } from '../../http/body.js';
import { invalidQuery, pageParams, singleParams } from '../../http/list-query.js';
import { validator } from '../../http/validate.js';
import { idempotencyKeyOf, runMutation } from '../../jobs/mutations.js';
import type { RouteDeps } from '../deps.js';

/** "*" subscribes to everything and stands alone: the schema says so, and validation enforces it. */
const eventTypesSchema = {
  description: `either a list of distinct event types (${WEBHOOK_EVENT_TYPES.join(', ')}) or ["*"] alone (every event type, also those added later)`,
  oneOf: [
    { type: 'array', minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true, items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] } },
    { type: 'array', minItems: 1, maxItems: 1, items: { type: 'string', const: ALL_EVENTS } },
  ],
} as const;
const urlSchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description:
    `Where deliveries are POSTed: \`https\` (\`http\` too in UAT), at most ${MAX_URL_LENGTH} characters, no credentials or fragment. Its port ` +
    `(written, or the scheme's: 443, 80 for http) must be one the deployment allows: ${DEFAULT_ALLOWED_PORTS.join(' and ')} unless it says otherwise. ` +
    'Its host must not be or resolve to a loopback, private, link-local, unique-local, multicast or unspecified address (IPv6 forms that embed an ' +
    'IPv4 address are judged as that address). Otherwise 400 `validation_error` naming `url`, whose issue lists the allowed ports.',
} as const;
const descriptionSchema = { type: 'string', maxLength: MAX_DESCRIPTION_LENGTH } as const;
/** The partner's own signing secret (docs/webhooks.md): held before the first delivery, never in a job result. */
const secretSchema = {
  type: 'string',
  pattern: PARTNER_SECRET_PATTERN,
  maxLength: 100,
  description:
    'Optional: the signing secret, `whsec_` and the standard base64 of 24 to 64 random bytes, made by the caller (the SDK and CLI make one) so it ' +
    'verifies the very first delivery. Without it the service makes one (read it with `GET …/secret`). Never in a job result, event or log.',
} as const;

export const endpointCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'eventTypes'],
  properties: { url: urlSchema, eventTypes: eventTypesSchema, description: descriptionSchema, secret: secretSchema },
} as const;

export const endpointUpdateSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { url: urlSchema, eventTypes: eventTypesSchema, description: descriptionSchema, status: { type: 'string', enum: [...WEBHOOK_ENDPOINT_STATUSES] } },
} as const;

export const recoverSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: { since: { type: 'string', format: 'date-time' } },
} as const;

const emptySchema = { type: 'object', additionalProperties: false, properties: {} } as const;

interface EndpointCreate {
  url: string;
  eventTypes: string[];
  description?: string;
  secret?: string;
}
interface EndpointUpdate {
  url?: string;
  eventTypes?: string[];
  description?: string;
  status?: WebhookEndpointStatusName;
}

export function deliveryRecord(d: WebhookDelivery__Output): Record<string, unknown> {
  return {
    deliveryId: d.deliveryId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: WEBHOOK_DELIVERY_STATUS.fromProto(d.status),
    attempts: d.attempts,
    lastAttemptAt: d.lastAttemptAt || null,
    ...(d.nextAttemptAt ? { nextAttemptAt: d.nextAttemptAt } : {}),
    ...(d.lastResponseStatus ? { lastResponseStatus: d.lastResponseStatus } : {}),
    ...(d.lastError ? { lastError: d.lastError } : {}),
  };
}

function invalidBody(details: ErrorDetail[]): DomainError {
  return new DomainError('validation_error', 'the request body is invalid; see details', { details });
}

export function webhookRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const rules: TargetRules = {
    allowHttp: deps.config.environment !== 'production',
    allowLoopback: deps.config.webhookAllowLoopbackTargets,
    allowedPorts: deps.config.webhookAllowedPorts,
  };
  const validateCreate = validator<EndpointCreate>(endpointCreateSchema);
  const validateUpdate = validator<EndpointUpdate>(endpointUpdateSchema);
  const validateRecover = validator<{ since: string }>(recoverSchema);
  const validateEmpty = validator<Record<string, never>>(emptySchema);
  const options = (ctx: GatewayContext) => grpcOptions(ctx, deps.config.grpcTimeoutMs);

  /** The URL's form and port, then (only when those pass) where its host resolves: 400 naming `url`. */
  async function checkUrl(raw: string): Promise<string> {
    const problems = await targetProblems(raw, rules);
    if (problems.length > 0) throw invalidBody(problems.map((issue) => ({ field: 'url', issue })));
    return new URL(raw).href;
  }

  /** An optional body: none (or an empty one) is {}; otherwise it must be JSON matching validate. */
  async function optionalBody<T>(ctx: GatewayContext, validate: (b: unknown) => T): Promise<T> {
    const length = ctx.get('content-length');
    if ((length === '' || length === '0') && !ctx.get('transfer-encoding')) return validate({});
    return validate(await readJson(ctx, deps.config.jsonLimitBytes));
  }

  /** The endpoint id of the path, which must exist for this partner (404 before any job). */
  async function existingEndpoint(ctx: GatewayContext): Promise<string> {
    const id = ctx.params.id ?? '';
    if (!isEndpointId(id)) throw new DomainError('not_found', 'webhook endpoint not found');
    await deps.clients.events.GetWebhookEndpoint({ owner: ownerOf(ctx), endpointId: id }, options(ctx));
    return id;
  }

  router.post('/webhook-endpoints', deps.guard('webhooks/write'), async (ctx) => {
    const body = validateCreate(await readJson(ctx, deps.config.jsonLimitBytes));
    const secretIssue = body.secret === undefined ? undefined : secretProblem(body.secret);
    if (secretIssue) throw invalidBody([{ field: 'secret', issue: secretIssue }]);
    const payload = { url: await checkUrl(body.url), eventTypes: [...new Set(body.eventTypes)], description: body.description ?? '' };
    // The secret travels in the job's payload only (the worker hands it to the events service); the
    // idempotency fingerprint holds its hash, so a replay with another secret is a different request.
    await runMutation(ctx, deps, {
      kind: JOB_KINDS.webhookEndpointCreate,
      payload: body.secret === undefined ? payload : { ...payload, secret: body.secret },
      fingerprintOf: body.secret === undefined ? payload : { ...payload, secret: body.secret },
    });
  });

  router.get('/webhook-endpoints', deps.guard('webhooks/read'), async (ctx) => {
    const details: ErrorDetail[] = [];
    const page = pageParams(singleParams(ctx.querystring, new Set(['limit', 'cursor']), details), details);
    if (details.length > 0) throw invalidQuery(details);
    const res = await deps.clients.events.ListWebhookEndpoints({ owner: ownerOf(ctx), ...page }, options(ctx));
    ctx.body = { items: res.endpoints.map(endpointRecord), nextCursor: res.nextPageToken || null };
  });

  router.get('/webhook-endpoints/:id', deps.guard('webhooks/read'), async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isEndpointId(id)) throw new DomainError('not_found', 'webhook endpoint not found');
    const res = await deps.clients.events.GetWebhookEndpoint({ owner: ownerOf(ctx), endpointId: id }, options(ctx));
    ctx.body = endpointRecord(res.endpoint!);
  });

  router.patch('/webhook-endpoints/:id', deps.guard('webhooks/write'), async (ctx) => {
    const body = validateUpdate(await readJson(ctx, deps.config.jsonLimitBytes));
    const endpointId = await existingEndpoint(ctx);
    const payload = {
      endpointId,
      ...(body.url !== undefined ? { url: await checkUrl(body.url) } : {}),
      ...(body.eventTypes !== undefined ? { eventTypes: [...new Set(body.eventTypes)] } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.status !== undefined ? { status: body.status } : {}),
    };
    await runMutation(ctx, deps, { kind: JOB_KINDS.webhookEndpointUpdate, payload, ids: { id: endpointId }, fingerprintOf: payload });
  });

  router.delete('/webhook-endpoints/:id', deps.guard('webhooks/write'), async (ctx) => {
    // Without a key, an endpoint that is not there is 404 at once. With one, the key decides: a
    // replay gets its original job (which deleted it); a new key gets a job that fails not_found.
    const endpointId = await existingEndpoint(ctx).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === 'not_found' && idempotencyKeyOf(ctx) && isEndpointId(ctx.params.id ?? '')) return ctx.params.id!;
      throw err;
    });
    await runMutation(ctx, deps, { kind: JOB_KINDS.webhookEndpointDelete, payload: { endpointId }, ids: { id: endpointId }, fingerprintOf: { endpointId } });
  });

  router.get('/webhook-endpoints/:id/secret', deps.guard('webhooks/write'), async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isEndpointId(id)) throw new DomainError('not_found', 'webhook endpoint not found');
    const res = await deps.clients.events.GetWebhookSecret({ owner: ownerOf(ctx), endpointId: id }, options(ctx));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { secret: res.secret };
  });

  router.post('/webhook-endpoints/:id/secret/rotate', deps.guard('webhooks/write'), async (ctx) => {
    await optionalBody(ctx, validateEmpty);
    const endpointId = await existingEndpoint(ctx);
    await runMutation(ctx, deps, { kind: JOB_KINDS.webhookEndpointRotateSecret, payload: { endpointId }, ids: { id: endpointId }, fingerprintOf: { endpointId } });
  });

  router.get('/webhook-endpoints/:id/deliveries', deps.guard('webhooks/read'), async (ctx) => {
    const details: ErrorDetail[] = [];
    const params = singleParams(ctx.querystring, new Set(['limit', 'cursor', 'status', 'eventId']), details);
    const page = pageParams(params, details);
    const status = params.get('status');
    if (status !== undefined && !WEBHOOK_DELIVERY_STATUS.is(status)) details.push({ field: 'status', issue: `must be one of: ${WEBHOOK_DELIVERY_STATUS.names.join(', ')}` });
    const eventId = params.get('eventId');
    if (eventId !== undefined && !isEventId(eventId)) details.push({ field: 'eventId', issue: 'must be an event id (evt_ and 32 hex characters)' });
    if (details.length > 0) throw invalidQuery(details);
    const id = ctx.params.id ?? '';
    if (!isEndpointId(id)) throw new DomainError('not_found', 'webhook endpoint not found');
    const res = await deps.clients.events.ListWebhookDeliveries(
      { owner: ownerOf(ctx), endpointId: id, ...page, ...(status !== undefined && WEBHOOK_DELIVERY_STATUS.is(status) ? { status: WEBHOOK_DELIVERY_STATUS.toProto(status) } : {}), eventId: eventId ?? '' },
      options(ctx),
    );
    ctx.body = { items: res.deliveries.map(deliveryRecord), nextCursor: res.nextPageToken || null };
  });

  router.post('/webhook-endpoints/:id/recover', deps.guard('webhooks/write'), async (ctx) => {
    const body = validateRecover(await readJson(ctx, deps.config.jsonLimitBytes));
    const since = new Date(parseTimestamp(body.since)!).toISOString();
    const endpointId = await existingEndpoint(ctx);
    await runMutation(ctx, deps, { kind: JOB_KINDS.webhookEndpointRecover, payload: { endpointId, since }, ids: { id: endpointId }, fingerprintOf: { endpointId, since } });
  });

  router.post('/webhook-endpoints/:id/ping', deps.guard('webhooks/write'), async (ctx) => {
    await optionalBody(ctx, validateEmpty);
    const endpointId = await existingEndpoint(ctx);
    await runMutation(ctx, deps, { kind: JOB_KINDS.webhookEndpointPing, payload: { endpointId }, ids: { id: endpointId }, fingerprintOf: { endpointId } });
  });
}
