// The event feed (GET /v1/events): its types, reading it page by page, and following it forever
// with long-poll.
import type { CallOptions } from './options.js';
import { passOn, seg, type Transport } from './transport.js';

export type EventType =
  | 'job.succeeded'
  | 'job.failed'
  | 'job.canceled'
  | 'submission.created'
  | 'attachment.created'
  | 'attachment.deleted'
  | 'webhook_endpoint.disabled'
  | 'submission.requirements_updated'
  | 'product.requirements_changed';

/** An event: the same JSON in the feed and in a webhook delivery. */
export interface PartnerEvent<D = Record<string, unknown>> {
  id: string;
  type: EventType;
  timestamp: string;
  data: D;
}

export interface EventPage {
  items: PartnerEvent[];
  /** Never null: where to resume, even after an empty page. */
  nextCursor: string;
}

export interface EventListParams {
  /** A previous page's nextCursor. */
  cursor?: string;
  /** Without a cursor: start at the events stored at or after this time. */
  since?: string | Date;
  /** Only these types (the cursor is not bound to them). */
  types?: readonly EventType[];
  /** 1..200 (default 50). */
  limit?: number;
}

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

/**
 * Every event from params (the cursor, since, or the oldest retained) onwards, forever: pages are
 * read back to back while they are full and held with Prefer: wait while the feed is idle. Ends
 * (without an error) when opts.signal aborts.
 */
export async function* followFeed(
  list: (params: EventListParams, opts: CallOptions & { wait?: number }) => Promise<EventPage>,
  params: EventListParams,
  opts: FollowOptions,
): AsyncGenerator<PartnerEvent> {
  const wait = Math.min(30, Math.max(1, opts.waitSeconds ?? 30));
  let cursor = params.cursor;
  const call: CallOptions = { ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.principalId !== undefined ? { principalId: opts.principalId } : {}) };
  while (!opts.signal?.aborted) {
    let page: EventPage;
    try {
      page = await list({ ...params, since: cursor ? undefined : params.since, cursor }, { ...call, wait });
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
  constructor(private readonly transport: Transport) {}

  /** One page; `wait` holds an empty page up to that many seconds. */
  async list(params: EventListParams, opts: CallOptions & { wait?: number }): Promise<EventPage> {
    const wait = opts.wait ?? 0;
    return (
      await this.transport.request<EventPage>({
        method: 'GET',
        path: '/v1/events',
        query: eventQuery(params),
        ...(wait > 0 ? { headers: { prefer: `wait=${wait}` }, holdSeconds: wait } : {}),
        ...passOn(opts),
      })
    ).body;
  }

  follow(params: EventListParams, opts: FollowOptions): AsyncGenerator<PartnerEvent> {
    return followFeed((p, o) => this.list(p, o), params, opts);
  }

  async get(eventId: string, opts: CallOptions): Promise<PartnerEvent> {
    return (await this.transport.request<PartnerEvent>({ method: 'GET', path: `/v1/events/${seg(eventId)}`, ...opts })).body;
  }
}
