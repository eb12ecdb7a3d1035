// The event feed's part of the OpenAPI document (GET /v1/events, GET /v1/events/{eventId}): its
// schemas and paths, merged into document.ts.
import { EVENT_TYPES } from '@partner/shared/domain/events';
import { PING_EVENT_TYPE } from '@partner/shared/domain/webhooks';
import { ref, type Schema } from './schemas.js';

type Obj = Record<string, unknown>;

const EVENT_EXAMPLE = {
  id: 'evt_019ab3e47c1d7b529a0e3f2d4c5b6a73',
  type: 'job.succeeded',
  timestamp: '2026-11-23T22:15:04.123Z',
  data: {
    id: 'job_0199a3e47c1d7b529a0e3f2d4c5b6a72',
    kind: 'submission.create',
    status: 'succeeded',
    result: {
      submissionId: '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71',
      submissionName: 'Acme Holdings LLC',
      status: 'submitted',
      clearance: { status: 'cleared', basis: null, decidedAt: '2026-11-23T22:15:04.120Z' },
    },
    createdAt: '2026-11-23T22:15:04.051Z',
    updatedAt: '2026-11-23T22:15:04.123Z',
  },
};
const CURSOR_EXAMPLE = 'AQAAAAAAAAAqv1xqf0c3Qm0yZ8nq2xW1cA';

/**
 * What each event type's `data` is. The document's `webhooks` (one delivery per type) carry it, and
 * the SDK's event types are generated from those (scripts/gen-sdk-events.mjs): a type added to
 * EVENT_TYPES without an entry here is delivered, and typed, as an object.
 */
export const EVENT_DATA: Record<string, Schema> = {
  'job.succeeded': ref('JobSucceeded'),
  'job.failed': ref('JobFailed'),
  'job.canceled': ref('JobCanceled'),
  'submission.created': ref('Submission'),
  'submission.withdrawn': ref('Submission'),
  'submission.clearance_changed': ref('Submission'),
  'submission.requirements_updated': ref('Submission'),
  'product.requirements_changed': ref('Product'),
  'attachment.created': ref('Attachment'),
  'attachment.deleted': {
    type: 'object',
    additionalProperties: false,
    required: ['submissionId', 'attachmentId'],
    properties: { submissionId: ref('Uuid'), attachmentId: ref('Uuid') },
  },
  'webhook_endpoint.disabled': ref('WebhookEndpoint'),
  [PING_EVENT_TYPE]: { type: 'object', additionalProperties: false, required: ['endpointId'], properties: { endpointId: ref('WebhookEndpointId') } },
};

/** An event type's `data` schema (an object for a type EVENT_DATA does not list). */
export const eventDataOf = (type: string): Schema => EVENT_DATA[type] ?? { type: 'object' };

export const eventSchemas: Record<string, Schema> = {
  EventId: { type: 'string', pattern: '^evt_[0-9a-f]{32}$', description: 'Event id: `evt_` and 32 lowercase hex characters.', examples: [EVENT_EXAMPLE.id] },
  EventType: { type: 'string', enum: [...EVENT_TYPES] },
  Event: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'type', 'timestamp', 'data'],
    description:
      'Something that happened to the partner\'s resources. The same JSON in the feed and in a webhook delivery. `data` by type: ' +
      '`job.succeeded` / `job.failed` / `job.canceled` — the job as `GET /v1/jobs/{id}` shows it, with `kind`; `submission.created`, `submission.withdrawn`, `submission.clearance_changed` — the submission as ' +
      '`GET /v1/submissions/{id}` shows it; `attachment.created` — the attachment record; `attachment.deleted` — `{submissionId, attachmentId}`; ' +
      '`submission.requirements_updated` — the submission (its `requirements.currentlyDue` changed); `product.requirements_changed` — ' +
      'the product as `GET /v1/products/{id}` shows it (sent to every partner).',
    properties: {
      id: ref('EventId'),
      type: ref('EventType'),
      timestamp: ref('Timestamp'),
      data: { type: 'object', description: 'What the event is about (see the type).' },
    },
    examples: [EVENT_EXAMPLE],
  },
  EventPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('Event') },
      nextCursor: {
        type: 'string',
        description:
          'Never null: pass it as `cursor` to read on from here, even after an empty page (any `types`). An empty page returns the ' +
          "cursor it was given, unchanged. Positions are the partner's own: nothing in a cursor reveals other partners' activity.",
      },
    },
    examples: [{ items: [EVENT_EXAMPLE], nextCursor: CURSOR_EXAMPLE }],
  },
};

export interface PathHelpers {
  apiHeaders(): Obj;
  preferHeaders(): Obj;
  param(name: string): Obj;
  response(name: string): Obj;
  json(schema: Schema): Obj;
  authErrors(): Obj;
}

export function eventPaths(h: PathHelpers): Obj {
  const principal = h.param('PrincipalId');
  return {
    '/v1/events': {
      get: {
        operationId: 'listEvents',
        tags: ['Events'],
        summary: 'Read the event feed',
        description:
          "The calling partner's events, oldest first, in one order that never changes: following `nextCursor` returns every event " +
          'exactly once, even while events are being written. Without `cursor` the feed starts at the oldest retained event, or at ' +
          '`since`. `nextCursor` is never null; a cursor is not bound to `types`, so a reader may change its filter and keep its place. ' +
          'With `Prefer: wait=N` (N ≤ 30) a page that would be empty is held until an event arrives or N seconds pass. Events are kept ' +
          '30 days (configurable); a cursor older than that is 410 `cursor_expired`: reconcile with the list endpoints and start again ' +
          'from `since`. An unknown or repeated parameter, an out-of-range `limit`, a garbled or foreign cursor, a bad `since` or an ' +
          'unknown type is 400 `validation_error` naming every bad parameter in `details`.',
        parameters: [
          h.param('Limit'),
          h.param('Cursor'),
          {
            name: 'since',
            in: 'query',
            description: 'Without `cursor`: start at the events stored at or after this RFC 3339 timestamp (write `+` as `%2B`).',
            schema: { type: 'string', format: 'date-time', examples: ['2026-11-23T00:00:00Z'] },
          },
          {
            name: 'types',
            in: 'query',
            description: `Only events of these types (a comma list of ${EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}).`,
            schema: { type: 'string', examples: ['submission.created,job.failed'] },
          },
          h.param('Prefer'),
          principal,
        ],
        responses: {
          200: { description: 'One page of events (possibly empty).', headers: { ...h.apiHeaders(), ...h.preferHeaders() }, content: h.json(ref('EventPage')) },
          400: h.response('BadRequest'),
          410: {
            description: '`cursor_expired`: the cursor is older than the event retention (non-retryable).',
            headers: h.apiHeaders(),
            content: h.json(ref('Error')),
          },
          ...h.authErrors(),
        },
      },
    },
    '/v1/events/{eventId}': {
      parameters: [{ name: 'eventId', in: 'path', required: true, description: 'The event id.', schema: ref('EventId') }],
      get: {
        operationId: 'getEvent',
        tags: ['Events'],
        summary: 'Read an event',
        description: "One event of the feed. Another partner's event is indistinguishable from a missing one (404).",
        parameters: [principal],
        responses: {
          200: { description: 'The event.', headers: h.apiHeaders(), content: h.json(ref('Event')) },
          400: h.response('BadRequest'),
          404: h.response('NotFound'),
          ...h.authErrors(),
        },
      },
    },
  };
}
