// GET /v1/events (the partner's event feed) and GET /v1/events/{id} (events/read), answered by the
// events service. The query string is checked here, every bad parameter reported at once (400
// validation_error): unknown or repeated parameters, limit 1..200, cursor (its form here; the events
// service checks that it issued it to this partner), since (RFC 3339, not with a cursor), types (a
// comma list of known types). Under Prefer: wait=N a page that would be empty is held until the
// events service says (over NATS) that it stored an event of this partner, or N seconds pass, and
// is then answered from the events the wake-up carries when they are exactly the page a read would
// give (wake-page.ts; a wake-up whose events show none of the reader's types leaves it waiting), or
// else read once more: waiting costs no database query and shares the gateway's waiter cap.
import type Router from '@koa/router';
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { EVENT_TYPES, isEventId, isEventType, type FeedWake } from '@partner/shared/domain/events';
import type { Event__Output } from '@partner/shared/generated/partner/events/v1/Event';
import type { ListEventsRequest } from '@partner/shared/generated/partner/events/v1/ListEventsRequest';
import type { ListEventsResponse__Output } from '@partner/shared/generated/partner/events/v1/ListEventsResponse';
import { grpcOptions, ownerOf, type GatewayContext, type GatewayState } from '../../context.js';
import { invalidQuery, pageParams, singleParams, timestampParam } from '../../http/list-query.js';
import { feedKey } from '../../settlement-waiters.js';
import type { RouteDeps } from '../deps.js';
import { preferredWait } from '../../jobs/responses.js';
import { holdWait } from '../../jobs/prefer-wait.js';
import { pageFromWake, type HeldQuery } from './wake-page.js';

const LIST_PARAMS = new Set(['limit', 'cursor', 'since', 'types']);

type FeedQuery = Omit<ListEventsRequest, 'owner'>;

export function parseFeedQuery(ctx: GatewayContext): FeedQuery {
  const details: ErrorDetail[] = [];
  const params = singleParams(ctx.querystring, LIST_PARAMS, details);
  const req: FeedQuery = { ...pageParams(params, details) };
  const since = timestampParam(params, 'since', details);
  if (since !== undefined) {
    if (params.get('cursor')) {
      details.push({ field: 'since', issue: 'cannot be combined with cursor: a cursor already says where to resume' });
    } else req.since = since;
  }
  const types = params.get('types');
  if (types !== undefined) {
    const list = types.split(',').map((t) => t.trim());
    const unknown = list.filter((t) => !isEventType(t));
    if (unknown.length > 0) {
      details.push({ field: 'types', issue: `must be a comma list of ${EVENT_TYPES.join(', ')}; unknown: ${unknown.map((t) => JSON.stringify(t)).join(', ')}` });
    } else req.types = [...new Set(list)];
  }
  if (details.length > 0) throw invalidQuery(details);
  return req;
}

export function eventRecord(e: Event__Output): Record<string, unknown> {
  return { id: e.id, type: e.type, timestamp: e.timestamp, data: JSON.parse(e.dataJson) as unknown };
}

function respondPage(ctx: GatewayContext, res: ListEventsResponse__Output): void {
  ctx.status = 200;
  ctx.body = { items: res.events.map(eventRecord), nextCursor: res.nextPageToken };
}

export function eventRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const read = (ctx: GatewayContext, query: FeedQuery) =>
    deps.clients.events.ListEvents({ owner: ownerOf(ctx), ...query }, grpcOptions(ctx, deps.config.grpcTimeoutMs));
  // Readers woken together (one wake-up, many readers of one partner at one cursor) share one read:
  // the same query of the same partner gets the same page.
  const inFlight = new Map<string, Promise<ListEventsResponse__Output>>();
  const sharedRead = (ctx: GatewayContext, query: FeedQuery): Promise<ListEventsResponse__Output> => {
    const key = JSON.stringify([ownerOf(ctx), query.pageToken, query.types ?? [], query.pageSize ?? 0]);
    let p = inFlight.get(key);
    if (!p) {
      p = read(ctx, query).finally(() => inFlight.delete(key));
      inFlight.set(key, p);
    }
    return p;
  };

  router.get('/events', deps.guard('events/read'), async (ctx) => {
    const query = parseFeedQuery(ctx);
    const wait = preferredWait(ctx);
    // Where the reader waits once its first page came back empty (`query`), and how far the wake-ups'
    // events have shown it has nothing new for its types (`at`: their cursor, while none matches).
    const hold: { query?: HeldQuery; at: string } = { at: '' };
    const accept = (wake: FeedWake): boolean => {
      if (!hold.query) return true;
      const answer = pageFromWake(wake, { ...hold.query, pageToken: hold.at });
      if (answer && 'passed' in answer) {
        hold.at = answer.passed;
        return false;
      }
      return true;
    };
    // Register before reading, so an event stored between the read and the wait is not missed.
    const waiter = wait ? holdWait<FeedWake>(ctx, deps, feedKey(ownerOf(ctx)), wait * 1000, accept) : undefined;
    let res: ListEventsResponse__Output;
    try {
      res = await read(ctx, query);
    } catch (err) {
      waiter?.cancel();
      ctx.remove('Preference-Applied');
      throw err;
    }
    if (res.events.length > 0 || !waiter) {
      waiter?.cancel();
      return respondPage(ctx, res);
    }
    // An empty page: hold it until an event of this partner is stored (or the deadline), then answer
    // from the wake-up's events when they are the page a read would give, or read once more from
    // where this page ended. Both answers go through respondPage.
    const { since: _since, ...rest } = query;
    const reread = { ...rest, pageToken: res.nextPageToken };
    hold.query = reread;
    hold.at = reread.pageToken;
    if (ctx.res.destroyed) waiter.cancel();
    else ctx.res.once('close', waiter.cancel);
    const done = (async () => {
      const woken = await waiter.settled;
      if (ctx.res.destroyed || ctx.req.socket.destroyed) return respondPage(ctx, res);
      if (woken) {
        const answer = pageFromWake(woken, { ...reread, pageToken: hold.at });
        const page = answer && 'page' in answer ? answer.page : undefined;
        deps.waiters.feedAnswered(page ? 'from_wakeup' : 'reread');
        if (page) return respondPage(ctx, page);
      }
      ctx.state.deadline = Math.max(ctx.state.deadline, Date.now() + deps.config.grpcTimeoutMs);
      respondPage(ctx, await sharedRead(ctx, reread));
    })();
    done.catch(() => undefined);
    ctx.state.answer = { done, cancel: waiter.cancel };
  });

  router.get('/events/:id', deps.guard('events/read'), async (ctx) => {
    const details: ErrorDetail[] = [];
    singleParams(ctx.querystring, new Set(), details);
    if (details.length > 0) throw invalidQuery(details);
    const id = ctx.params.id ?? '';
    if (!isEventId(id)) throw notFound('event');
    const res = await deps.clients.events.GetEvent({ owner: ownerOf(ctx), eventId: id }, grpcOptions(ctx, deps.config.grpcTimeoutMs));
    if (!res.event) throw new DomainError('internal', 'internal error');
    ctx.body = eventRecord(res.event);
  });
}
