// The event feed (client.events, GET /v1/events): its types, reading it page by page, and following
// it forever with long-poll. The event types are generated from the OpenAPI document (event-types.ts).
import type { Connection } from './connection.js';
import type { EventDataMap, EventType, FeedEventType } from './event-types.js';
import type { CallOptions } from './options.js';
import { passOn, seg } from './transport.js';
import type * as wire from './wire-types.js';

export { EVENT_TYPES, FEED_EVENT_TYPES } from './event-types.js';
export type { EventDataMap, EventType, FeedEventType } from './event-types.js';

/**
 * An event: the same JSON in the feed and in a webhook delivery. A union on `type`, so checking the
 * type narrows `data` (`if (e.type === 'submission.created') e.data.submissionId`). `PartnerEvent<'job.failed'>`
 * is that type's alone. Generated from the OpenAPI document (event-types.ts); a newer server may send
 * types this version does not know yet: ignore them.
 */
export type PartnerEvent<T extends EventType = EventType> = {
  [K in T]: { id: string; type: K; timestamp: string; data: EventDataMap[K] };
}[T];

/** A page of the feed: the document's EventPage, its items typed by their type. */
export interface EventPage extends Omit<wire.EventPage, 'items'> {
  items: PartnerEvent[];
}

/** GET /v1/events's query, `since` also a Date and `types` a list (the wire has a comma-separated string). */
export interface EventListParams extends Omit<wire.ListEventsQuery, 'since' | 'types'> {
  /** Without a cursor: start at the events stored at or after this time. */
  since?: string | Date;
  /** Only these types (the cursor is not bound to them). */
  types?: readonly FeedEventType[];
}

/**
 * Where following the feed starts, said explicitly: `{ from: 'now' }` (only what is stored from now
 * on, as `partner listen` and `partner events tail` do), `{ from: 'start' }` (the oldest retained
 * event: up to 30 days of history first), `{ since }` or `{ cursor }` (resume where you stopped).
 */
export type FollowStart = { from: 'now' | 'start'; since?: never; cursor?: never } | { since: string | Date; from?: never; cursor?: never } | { cursor: string; from?: never; since?: never };

/** What followEvents reads: where it starts, and optionally only some types and the page size. */
export type FollowParams = Omit<EventListParams, 'cursor' | 'since'> & FollowStart;

export interface FollowOptions extends CallOptions {
  /** Prefer: wait=N on each empty page (default 30, the most the API holds a request). */
  waitSeconds?: number;
  /** Called with the cursor after each page, to persist it and resume there after a restart. */
  onCursor?: (cursor: string) => void;
}

/** The query string of a feed page. */
export function eventQuery(params: EventListParams): Record<string, string | number | undefined> {
  return {
    cursor: params.cursor || undefined,
    since: params.since instanceof Date ? params.since.toISOString() : params.since,
    types: params.types && params.types.length > 0 ? params.types.join(',') : undefined,
    limit: params.limit,
  };
}

/** The feed parameters a FollowStart stands for ('now' is this machine's clock: the events stored from then on). */
export function followStartParams(start: FollowStart, now: () => Date = () => new Date()): Pick<EventListParams, 'cursor' | 'since'> {
  if (start.cursor !== undefined) return { cursor: start.cursor };
  if (start.since !== undefined) return { since: start.since };
  if (start.from === 'now') return { since: now().toISOString() };
  if (start.from === 'start') return {};
  throw new TypeError("followEvents: say where to start: { from: 'now' }, { from: 'start' }, { since } or { cursor }");
}

/**
 * Every event from where params says (FollowStart; 'now' is the moment of this call, not of the
 * first read) onwards, forever: pages are read back to back while they are full and held with
 * Prefer: wait while the feed is idle. Ends (without an error) when opts.signal aborts.
 */
export function followFeed(
  list: (params: EventListParams, opts: CallOptions & { wait?: number }) => Promise<EventPage>,
  params: FollowParams,
  opts: FollowOptions,
): AsyncGenerator<PartnerEvent> {
  const { from: _from, since: _since, cursor: _cursor, ...rest } = params;
  return follow(list, rest, followStartParams(params), opts);
}

async function* follow(
  list: (params: EventListParams, opts: CallOptions & { wait?: number }) => Promise<EventPage>,
  rest: Omit<EventListParams, 'cursor' | 'since'>,
  start: Pick<EventListParams, 'cursor' | 'since'>,
  opts: FollowOptions,
): AsyncGenerator<PartnerEvent> {
  const wait = Math.min(30, Math.max(1, opts.waitSeconds ?? 30));
  let cursor = start.cursor;
  const call: CallOptions = { ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.principalId !== undefined ? { principalId: opts.principalId } : {}) };
  while (!opts.signal?.aborted) {
    let page: EventPage;
    try {
      page = await list({ ...rest, since: cursor ? undefined : start.since, cursor }, { ...call, wait });
    } catch (err) {
      if (opts.signal?.aborted) return;
      throw err;
    }
    for (const e of page.items) {
      if (opts.signal?.aborted) return;
      yield e;
    }
    cursor = page.nextCursor;
    opts.onCursor?.(cursor);
  }
}

export class EventFeed {
  constructor(private readonly connection: Connection) {}

  /** GET /v1/events: one page of the event feed. `wait` holds an empty page up to that many seconds. */
  async list(params: EventListParams = {}, opts: CallOptions & { wait?: number } = {}): Promise<EventPage> {
    const wait = opts.wait ?? 0;
    return (
      await this.connection.transport.request<EventPage>({
        method: 'GET',
        path: '/v1/events',
        query: eventQuery(params),
        ...(wait > 0 ? { headers: { prefer: `wait=${wait}` }, holdSeconds: wait } : {}),
        ...passOn(opts),
      })
    ).body;
  }

  /**
   * Follows the event feed forever with long-poll, from where params says: `{ from: 'now' }`,
   * `{ from: 'start' }` (30 days of history first), `{ since }` or `{ cursor }`; ends when opts.signal
   * aborts (followFeed).
   */
  follow(params: FollowParams, opts: FollowOptions = {}): AsyncGenerator<PartnerEvent> {
    return followFeed((p, o) => this.list(p, o), params, opts);
  }

  /** GET /v1/events/{id}. */
  async get(eventId: string, opts: CallOptions = {}): Promise<PartnerEvent> {
    return (await this.connection.transport.request<PartnerEvent>({ method: 'GET', path: `/v1/events/${seg(eventId)}`, ...opts })).body;
  }
}
