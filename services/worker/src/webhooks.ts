// Job handlers for webhook endpoint mutations: each calls the events service, which owns endpoints
// and is idempotent by job id. Results never carry a secret (a rotation's result says when, not what).
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { endpointRecord, WEBHOOK_ENDPOINT_STATUS, type WebhookEndpointStatusName } from '@partner/shared/domain/webhooks';
import { failOnRefusal, jobScope, type Handler } from './handler-contract.js';

/** Payloads as the gateway queues them. */
export interface EndpointCreatePayload {
  url: string;
  eventTypes: string[];
  description?: string;
  /** The partner's own secret, when it brought one (never returned: the result is the endpoint's record). */
  secret?: string;
}
export interface EndpointUpdatePayload {
  endpointId: string;
  url?: string;
  eventTypes?: string[];
  description?: string;
  status?: WebhookEndpointStatusName;
}
export interface EndpointPayload {
  endpointId: string;
}
export interface EndpointRecoverPayload extends EndpointPayload {
  since: string;
}

const create: Handler = async (job, payload, ctx) => {
  const p = payload as EndpointCreatePayload;
  const { endpoint } = await ctx.clients.events
    .CreateWebhookEndpoint({ ...jobScope(job), url: p.url, eventTypes: p.eventTypes, description: p.description ?? '', secret: p.secret ?? '' })
    .catch(failOnRefusal);
  return endpointRecord(endpoint!);
};

const update: Handler = async (job, payload, ctx) => {
  const p = payload as EndpointUpdatePayload;
  const { endpoint } = await ctx.clients.events
    .UpdateWebhookEndpoint({
      ...jobScope(job),
      endpointId: p.endpointId,
      ...(p.url !== undefined ? { url: p.url } : {}),
      eventTypes: p.eventTypes ?? [],
      setEventTypes: p.eventTypes !== undefined,
      ...(p.description !== undefined ? { description: p.description } : {}),
      ...(p.status !== undefined ? { status: WEBHOOK_ENDPOINT_STATUS.toProto(p.status) } : {}),
    })
    .catch(failOnRefusal);
  return endpointRecord(endpoint!);
};

const remove: Handler = async (job, payload, ctx) => {
  const p = payload as EndpointPayload;
  const r = await ctx.clients.events.DeleteWebhookEndpoint({ ...jobScope(job), endpointId: p.endpointId }).catch(failOnRefusal);
  return { endpointId: r.endpointId, deleted: true };
};

const rotate: Handler = async (job, payload, ctx) => {
  const p = payload as EndpointPayload;
  const r = await ctx.clients.events.RotateWebhookSecret({ ...jobScope(job), endpointId: p.endpointId }).catch(failOnRefusal);
  return { endpointId: r.endpointId, rotatedAt: r.rotatedAt, previousSecretExpiresAt: r.previousSecretExpiresAt };
};

const recover: Handler = async (job, payload, ctx) => {
  const p = payload as EndpointRecoverPayload;
  const r = await ctx.clients.events
    .RecoverWebhookEndpoint({ ...jobScope(job), endpointId: p.endpointId, since: p.since })
    .catch(failOnRefusal);
  return { endpointId: r.endpointId, since: r.since, queued: r.queued };
};

const ping: Handler = async (job, payload, ctx) => {
  const p = payload as EndpointPayload;
  const r = await ctx.clients.events.PingWebhookEndpoint({ ...jobScope(job), endpointId: p.endpointId }).catch(failOnRefusal);
  return { endpointId: r.endpointId, eventId: r.eventId };
};

export const webhookHandlers: Record<string, Handler> = {
  [JOB_KINDS.webhookEndpointCreate]: create,
  [JOB_KINDS.webhookEndpointUpdate]: update,
  [JOB_KINDS.webhookEndpointDelete]: remove,
  [JOB_KINDS.webhookEndpointRotateSecret]: rotate,
  [JOB_KINDS.webhookEndpointRecover]: recover,
  [JOB_KINDS.webhookEndpointPing]: ping,
};
