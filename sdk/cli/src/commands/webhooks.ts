// `partner webhooks …`: endpoints that receive the events as signed deliveries, their secrets and
// delivery logs. Every change is a job, waited for like every other mutation (--wait, --idempotency-key).
import type { PartnerClient, WebhookDelivery, WebhookDeliveryListParams, WebhookEndpoint, WebhookEndpointCreate, WebhookEndpointUpdate } from '@partner/sdk';
import { webhooks } from '@partner/sdk';
import { EXIT, intOption, mutation, showList, UsageError, type Command, type Values } from '../command.js';

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

/** What an endpoint subscribes to: a list of event types, or "*" alone (the server checks which). */
type EventTypes = WebhookEndpointCreate['eventTypes'];

/** --types a,b (default: every type, "*"). */
function typesOf(v: Values, fallback?: EventTypes): EventTypes | undefined {
  if (v.types === undefined) return fallback;
  const types = v.types.split(',').map((t) => t.trim()).filter(Boolean);
  if (types.length === 0) throw new UsageError('--types needs at least one event type (or * for all)');
  return types as EventTypes;
}

const ENDPOINT_COLUMNS: [string, string][] = [
  ['endpointId', 'id'],
  ['url', 'url'],
  ['eventTypes', 'types'],
  ['status', 'status'],
  ['disabledReason', 'reason'],
  ['description', 'description'],
];

export const WEBHOOK_COMMANDS: Record<string, Command> = {
  'webhooks create': {
    usage: 'webhooks create --url URL [--types T1,T2|*] [--description TEXT] [--secret whsec_…] [--wait SECONDS] [--idempotency-key KEY]',
    summary: 'register an endpoint for the event types (default all); prints its signing secret (made here unless --secret) once',
    examples: [
      'partner webhooks create --url https://hooks.example.com/partner --types submission.created,job.failed',
      'partner webhooks create --url https://hooks.example.com/partner --description "all events"',
    ],
    args: [],
    options: ['url', 'types', 'description', 'secret', 'wait', 'idempotency-key'],
    run: async (ctx) => {
      const v = ctx.values;
      if (!v.url) throw new UsageError('--url is required: where the deliveries are POSTed');
      if (v.secret !== undefined && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(v.secret)) throw new UsageError('--secret must be whsec_ and the base64 of 24 to 64 random bytes');
      // Made here, before the request: the secret is the partner's from the first delivery on.
      const secret = v.secret ?? webhooks.newSecret();
      const input = { url: v.url, eventTypes: typesOf(v, ['*'])!, secret, ...(v.description !== undefined ? { description: v.description } : {}) };
      const client = ctx.client();
      const code = await mutation(ctx, 'webhook endpoint', (opts) => client.createWebhookEndpoint(input, opts));
      if (code !== EXIT.ok) ctx.out.note(`its signing secret, once the job succeeds: ${secret}`);
      else if (!v.secret) ctx.out.note('keep the secret in your secret store: it verifies every delivery (partner webhooks secret reads it again)');
      return code;
    },
  },
  'webhooks list': {
    usage: 'webhooks list [--limit N] [--cursor C] [--all]',
    summary: 'your webhook endpoints, newest first',
    examples: ['partner webhooks list', 'partner webhooks list --all --json'],
    args: [],
    options: ['limit', 'cursor', 'all'],
    run: async (ctx) => {
      const limit = intOption(ctx.values, 'limit');
      const params = limit !== undefined ? { limit } : {};
      const client = ctx.client();
      return showList<WebhookEndpoint>(
        ctx,
        (cursor) => client.listWebhookEndpoints({ ...params, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
        () => client.iterateWebhookEndpoints(params, { signal: ctx.signal }),
        ENDPOINT_COLUMNS,
      );
    },
  },
  'webhooks get': {
    usage: 'webhooks get ENDPOINT_ID',
    summary: 'one webhook endpoint',
    examples: ['partner webhooks get we_0199a3e47c1d7b529a0e3f2d4c5b6a74'],
    args: ['ENDPOINT_ID'],
    options: [],
    run: async (ctx, [id]) => {
      ctx.out.record(await ctx.client().getWebhookEndpoint(id!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'webhooks update': {
    usage: 'webhooks update ENDPOINT_ID [--url URL] [--types T1,T2|*] [--description TEXT] [--enable|--disable] [--wait SECONDS]',
    summary: 'change an endpoint; --enable after it was disabled (then webhooks recover to send what it missed)',
    examples: ['partner webhooks update we_0199a3e47c1d7b529a0e3f2d4c5b6a74 --enable', 'partner webhooks update we_0199a3e47c1d7b529a0e3f2d4c5b6a74 --types "*"'],
    args: ['ENDPOINT_ID'],
    options: ['url', 'types', 'description', 'enable', 'disable', 'wait', 'idempotency-key'],
    run: async (ctx, [id]) => {
      const v = ctx.values;
      if (v.enable && v.disable) throw new UsageError('--enable or --disable, not both');
      const types = typesOf(v);
      const changes: WebhookEndpointUpdate = {
        ...(v.url !== undefined ? { url: v.url } : {}),
        ...(types ? { eventTypes: types } : {}),
        ...(v.description !== undefined ? { description: v.description } : {}),
        ...(v.enable ? { status: 'enabled' as const } : v.disable ? { status: 'disabled' as const } : {}),
      };
      if (Object.keys(changes).length === 0) throw new UsageError('nothing to change: give --url, --types, --description, --enable or --disable');
      const client = ctx.client();
      return mutation(ctx, 'webhook endpoint', (opts) => client.updateWebhookEndpoint(id!, changes, opts));
    },
  },
  'webhooks delete': {
    usage: 'webhooks delete ENDPOINT_ID [--wait SECONDS]',
    summary: 'delete an endpoint and its delivery log',
    examples: ['partner webhooks delete we_0199a3e47c1d7b529a0e3f2d4c5b6a74'],
    args: ['ENDPOINT_ID'],
    options: ['wait', 'idempotency-key'],
    run: async (ctx, [id]) => {
      const client = ctx.client();
      return mutation(ctx, 'webhook endpoint deletion', (opts) => client.deleteWebhookEndpoint(id!, opts));
    },
  },
  'webhooks secret': {
    usage: 'webhooks secret ENDPOINT_ID',
    summary: "print the endpoint's signing secret (whsec_…), to verify deliveries with",
    examples: ['partner webhooks secret we_0199a3e47c1d7b529a0e3f2d4c5b6a74'],
    args: ['ENDPOINT_ID'],
    options: [],
    run: async (ctx, [id]) => {
      const secret = await ctx.client().getWebhookSecret(id!, { signal: ctx.signal });
      if (ctx.out.json) ctx.out.record({ secret });
      else ctx.io.stdout.write(`${secret}\n`);
      return EXIT.ok;
    },
  },
  'webhooks rotate': {
    usage: 'webhooks rotate ENDPOINT_ID [--wait SECONDS]',
    summary: 'a new signing secret at once; the old one keeps signing beside it for 24 h',
    examples: ['partner webhooks rotate we_0199a3e47c1d7b529a0e3f2d4c5b6a74'],
    args: ['ENDPOINT_ID'],
    options: ['wait', 'idempotency-key'],
    run: async (ctx, [id]) => {
      const client = ctx.client();
      const code = await mutation(ctx, 'secret rotation', (opts) => client.rotateWebhookSecret(id!, opts));
      if (code === EXIT.ok) ctx.out.note(`read the new secret with: partner webhooks secret ${id}`);
      return code;
    },
  },
  'webhooks deliveries': {
    usage: 'webhooks deliveries ENDPOINT_ID [--status pending|succeeded|failed] [--event EVENT_ID] [--limit N] [--cursor C] [--all]',
    summary: 'the delivery log of an endpoint, newest first: attempts, last answer, next attempt',
    examples: ['partner webhooks deliveries we_0199a3e47c1d7b529a0e3f2d4c5b6a74 --status failed'],
    args: ['ENDPOINT_ID'],
    options: ['status', 'event', 'limit', 'cursor', 'all'],
    run: async (ctx, [id]) => {
      const v = ctx.values;
      if (v.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(v.status)) {
        throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      }
      const limit = intOption(v, 'limit');
      const params: WebhookDeliveryListParams = {
        ...(v.status ? { status: v.status as WebhookDeliveryListParams['status'] } : {}),
        ...(v.event ? { eventId: v.event } : {}),
        ...(limit !== undefined ? { limit } : {}),
      };
      const client: PartnerClient = ctx.client();
      return showList<WebhookDelivery>(
        ctx,
        (cursor) => client.listWebhookDeliveries(id!, { ...params, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
        () => client.iterateWebhookDeliveries(id!, params, { signal: ctx.signal }),
        [
          ['eventType', 'event'],
          ['status', 'status'],
          ['attempts', 'attempts'],
          ['lastResponseStatus', 'last answer'],
          ['lastAttemptAt', 'last attempt'],
          ['nextAttemptAt', 'next attempt'],
          ['lastError', 'error'],
          ['eventId', 'event id'],
        ],
      );
    },
  },
  'webhooks recover': {
    usage: 'webhooks recover ENDPOINT_ID --since TIME [--wait SECONDS]',
    summary: 'send every matching event since TIME again (after your receiver was down); enables the endpoint',
    examples: ['partner webhooks recover we_0199a3e47c1d7b529a0e3f2d4c5b6a74 --since 2026-11-23T00:00:00Z'],
    args: ['ENDPOINT_ID'],
    options: ['since', 'wait', 'idempotency-key'],
    run: async (ctx, [id]) => {
      if (!ctx.values.since) throw new UsageError('--since is required: an RFC 3339 time, e.g. 2026-11-23T00:00:00Z');
      const client = ctx.client();
      const since = ctx.values.since;
      return mutation(ctx, 'recovery', (opts) => client.recoverWebhookEndpoint(id!, since, opts));
    },
  },
  'webhooks ping': {
    usage: 'webhooks ping ENDPOINT_ID [--wait SECONDS]',
    summary: 'send a webhook_endpoint.ping event to the endpoint, to test the receiver',
    examples: ['partner webhooks ping we_0199a3e47c1d7b529a0e3f2d4c5b6a74'],
    args: ['ENDPOINT_ID'],
    options: ['wait', 'idempotency-key'],
    run: async (ctx, [id]) => {
      const client = ctx.client();
      return mutation(ctx, 'ping', (opts) => client.pingWebhookEndpoint(id!, opts));
    },
  },
};
