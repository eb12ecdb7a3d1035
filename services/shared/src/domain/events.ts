// Events (docs/events.md): the types, the event as the API shows it and as the events stream carries
// it, and event ids. How a service records one in the transaction of the change it describes (its
// schema's event_outbox, relayed to the events stream) is nats/event-outbox.ts.
import { v7 as uuidv7 } from 'uuid';

export const EVENT_TYPES = [
  'job.succeeded',
  'job.failed',
  'job.canceled',
  'submission.created',
  'submission.withdrawn',
  'submission.clearance_changed',
  'attachment.created',
  'attachment.deleted',
  'webhook_endpoint.disabled',
  'submission.requirements_updated',
  'product.requirements_changed',
  'quote.created',
  'quote.updated',
  'policy.issued',
  'policy.updated',
  'submission.updated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * What each type says happened, and its `data` (what the matching GET shows): README.md's event table,
 * written by scripts/gen-doc-tables.mjs from this record (a new type without a line here does not compile).
 */
export const EVENT_TYPE_MEANINGS: Record<EventType, { when: string; data: string }> = {
  'job.succeeded': { when: 'a job succeeded', data: 'the job, with its `result`' },
  'job.failed': { when: 'a job failed', data: 'the job, with its `error`' },
  'job.canceled': { when: 'the partner cancelled a job before it started', data: 'the job' },
  'submission.created': { when: 'a submission was created', data: 'the submission' },
  'submission.withdrawn': { when: 'the partner withdrew a submission', data: 'the submission' },
  'submission.clearance_changed': { when: 'a submission\'s clearance changed: its risk was released by a withdrawal, or an operator decided', data: 'the submission' },
  'attachment.created': { when: 'an attachment was stored', data: 'the attachment' },
  'attachment.deleted': { when: 'an attachment was deleted', data: 'the attachment' },
  'webhook_endpoint.disabled': { when: 'one of the partner\'s webhook endpoints was disabled (`disabledReason` `gone` or `failing`)', data: 'the endpoint' },
  'submission.requirements_updated': { when: 'a submission\'s `currentlyDue` changed (an attachment uploaded or deleted)', data: 'the submission' },
  'product.requirements_changed': { when: 'an operator changed a product\'s requirements; sent to every partner', data: 'the product' },
  'quote.created': { when: 'a quote request created a quote (any status: `open`, `referred` or `declined`)', data: 'the quote' },
  'quote.updated': { when: 'a quote\'s status changed: a referral decided, expired, superseded, not taken or bound', data: 'the quote' },
  'policy.issued': { when: 'a bind issued a policy', data: 'the policy' },
  'policy.updated': { when: 'a policy\'s status changed (`pending` → `active` → `expired`)', data: 'the policy' },
  'submission.updated': { when: 'a submission\'s status became `bound`', data: 'the submission' },
};
export const isEventType = (s: string): s is EventType => (EVENT_TYPES as readonly string[]).includes(s);

/** An event as the feed (and a webhook delivery) shows it. */
export interface ApiEvent {
  id: string;
  type: EventType;
  /** RFC 3339 UTC with milliseconds: when the change committed (its record's updatedAt/createdAt). */
  timestamp: string;
  data: unknown;
}

/**
 * The owner of an event meant for every partner (product.requirements_changed): tenant and partner
 * `*`. The events service's writer stores one copy per partner it knows (docs/events.md, "Events for
 * every partner").
 */
export const EVERY_PARTNER = { tenantId: '*', partnerId: '*' } as const;
export const isForEveryPartner = (m: { tenantId: string; partnerId: string }): boolean => m.tenantId === '*' && m.partnerId === '*';

/** The message on the events stream: the event and whose it is. */
export interface EventMessage {
  tenantId: string;
  partnerId: string;
  event: ApiEvent;
}

const EVENT_ID = /^evt_[0-9a-f]{32}$/;
export const newEventId = (): string => `evt_${uuidv7().replace(/-/g, '')}`;
export const isEventId = (s: string): boolean => EVENT_ID.test(s);

/** The page size of GET /v1/events when `limit` is not given (the events service's ListEvents default). */
export const FEED_DEFAULT_PAGE_SIZE = 50;

/**
 * One stored event as a feed wake-up carries it: the event exactly as ListEvents returns it (id, type,
 * timestamp as the feed prints it, dataJson as PostgreSQL prints the stored jsonb), its partner_seq,
 * and the cursor just past it (what a page ending at this event returns as nextCursor).
 */
export interface FeedWakeEvent {
  id: string;
  type: string;
  timestamp: string;
  dataJson: string;
  seq: string;
  cursor: string;
}

/**
 * The feed wake-up the events service publishes after each commit, per partner, on core NATS
 * (natsNames().feedWakeSubject): an event of this partner is stored at partner_seq `seq` (the
 * partner's head after the commit). Since issue 47 item 3 it may also carry the partner's events of
 * that commit: `events`, contiguous and in order, starting right after the position whose cursor is
 * `after` (a prefix of the commit's events when they do not all fit; none at all, and no `after`,
 * when not even the first fits). A gateway answers a waiting reader at cursor `after` from them, and
 * re-reads otherwise; one that knows only {tenantId, partnerId, seq} re-reads as before.
 */
export interface FeedWake {
  tenantId: string;
  partnerId: string;
  seq: string;
  after?: string;
  events?: FeedWakeEvent[];
}
