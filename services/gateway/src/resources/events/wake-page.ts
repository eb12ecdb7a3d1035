// A waiting feed reader's page from the wake-up that woke it (issue 47, item 3). The events service's
// wake-up carries the partner's events of a commit as ListEvents returns them, each with its
// partner_seq and the cursor past it, and the cursor just before the first (`after`; FeedWake in
// shared/domain/events.ts). From them the gateway gives the page ListEvents would give at that commit
// (the app.ts ListEvents rules: rows after the cursor matching `types`, at most `limit`; a full page
// ends at its last row, a short one at the partner's head, an empty one keeps the cursor it was
// given) when every one of these holds, and nothing otherwise (the reader then reads again, as before):
// - the reader's cursor is `after`, byte for byte: the first event is the reader's position + 1, so
//   nothing between was missed (a position of a partner is always the same token; a cursor sealed
//   with a secret since rotated out of first place never matches, and is read again);
// - the events are contiguous (each seq one past the one before) and end at or below the head `seq`;
// - they hold `limit` events of the reader's `types` (the page is full: the first `limit` of them), or
//   they are all of the commit's events, through the head (the page is short: it ends at the head).
// A wake-up whose events are all of the commit's and hold none of the reader's types would give an
// empty page: the reader has passed them (`passed`, the cursor at the head) and keeps waiting, from
// there, for the next wake-up (a read at its cursor would skip the same events of other types).
// A reader's `since` does not matter: its held read continues from the cursor of its first page.
import { FEED_DEFAULT_PAGE_SIZE, type FeedWake, type FeedWakeEvent } from '@partner/shared/domain/events';
import type { ListEventsResponse__Output } from '@partner/shared/generated/partner/events/v1/ListEventsResponse';

export interface HeldQuery {
  /** Where the reader waits: its empty page's cursor, or the cursor it has passed to since (`passed`). */
  pageToken: string;
  pageSize?: number;
  types?: string[];
}

export type WakeAnswer = { page: ListEventsResponse__Output } | { passed: string } | undefined;

/** The wake-up's events when they are well formed and contiguous through at most the head; else undefined. */
function contiguous(wake: FeedWake): { events: FeedWakeEvent[]; complete: boolean } | undefined {
  const events = wake.events;
  if (!Array.isArray(events) || events.length === 0 || typeof wake.after !== 'string') return undefined;
  try {
    let seq = BigInt(events[0]!.seq) - 1n;
    for (const e of events) {
      if (typeof e?.seq !== 'string' || BigInt(e.seq) !== seq + 1n) return undefined;
      if (typeof e.id !== 'string' || typeof e.type !== 'string' || typeof e.timestamp !== 'string' || typeof e.dataJson !== 'string' || typeof e.cursor !== 'string') return undefined;
      seq++;
    }
    const head = BigInt(wake.seq);
    if (seq > head) return undefined;
    return { events, complete: seq === head };
  } catch {
    return undefined;
  }
}

/**
 * Answers by wake-up (one object per message, handed to every reader it wakes) and query: the many
 * readers of one partner at one cursor that one wake-up wakes (and asks, as it arrives, whether it is
 * for them) work it out once, as they would share one read.
 */
const answers = new WeakMap<FeedWake, Map<string, WakeAnswer>>();

export function pageFromWake(wake: FeedWake | undefined, query: HeldQuery): WakeAnswer {
  if (!wake || wake.after !== query.pageToken) return undefined;
  let known = answers.get(wake);
  if (!known) answers.set(wake, (known = new Map()));
  const key = JSON.stringify([query.types ?? [], query.pageSize ?? 0]);
  if (known.has(key)) return known.get(key);
  const answer = answerOf(wake, query);
  known.set(key, answer);
  return answer;
}

function answerOf(wake: FeedWake, query: HeldQuery): WakeAnswer {
  const carried = contiguous(wake);
  if (!carried) return undefined;
  const { events, complete } = carried;
  const types = query.types && query.types.length > 0 ? new Set(query.types) : undefined;
  const matching = types ? events.filter((e) => types.has(e.type)) : events;
  const limit = query.pageSize || FEED_DEFAULT_PAGE_SIZE;
  if (matching.length < limit && !complete) return undefined;
  if (matching.length === 0) return { passed: events.at(-1)!.cursor };
  const rows = matching.slice(0, limit);
  return {
    page: {
      events: rows.map((e) => ({ id: e.id, type: e.type, timestamp: e.timestamp, dataJson: e.dataJson })),
      // A full page ends at its last event; a short one at the head, the last event carried.
      nextPageToken: (rows.length === limit ? rows.at(-1)! : events.at(-1)!).cursor,
    },
  };
}
