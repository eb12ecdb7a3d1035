// The event feed's part of the OpenAPI document (GET /v1/events, GET /v1/events/{eventId}): its
// schemas and paths. Each event type's `data` is declared by the resource that emits it
// (Resource.openapi.eventData).
import { EVENT_TYPES } from '@partner/shared/domain/events';
import { apiHeaders, authErrors, json, param, preferHeaders, response, type Obj } from '../../openapi/common.js';
import { EXAMPLE_SUBMISSION } from '../submissions/openapi.js';
import { ref, type Schema } from '../../openapi/schemas.js';

const EVENT_EXAMPLE = {
  id: 'evt_019ab3e47c1d7b529a0e3f2d4c5b6a73',
  type: 'job.succeeded',
  timestamp: '2026-11-23T22:15:04.123Z',
  data: {
    id: 'job_0199a3e47c1d7b529a0e3f2d4c5b6a72',
    kind: 'submission.create',
    status: 'succeeded',
    result: EXAMPLE_SUBMISSION,
    createdAt: '2026-11-23T22:15:04.051Z',
    updatedAt: '2026-11-23T22:15:04.123Z',
  },
};
const CURSOR_EXAMPLE = 'AQAAAAAAAAAqv1xqf0c3Qm0yZ8nq2xW1cA';

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

export function eventPaths(): Obj {
  const principal = param('PrincipalId');
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
          param('Limit'),
          param('Cursor'),
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
          param('Prefer'),
          principal,
        ],
        responses: {
          200: { description: 'One page of events (possibly empty).', headers: { ...apiHeaders(), ...preferHeaders() }, content: json(ref('EventPage')) },
          400: response('BadRequest'),
          410: {
            description: '`cursor_expired`: the cursor is older than the event retention (non-retryable).',
            headers: apiHeaders(),
            content: json(ref('Error')),
          },
          ...authErrors(),
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
          200: { description: 'The event.', headers: apiHeaders(), content: json(ref('Event')) },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
  };
}
