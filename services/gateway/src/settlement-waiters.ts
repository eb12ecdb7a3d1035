// Requests waiting for a job to settle (Prefer: wait). One subscription to the settlement subject
// per gateway process feeds a map of waiters by job id: waiting costs no database query and no
// polling. A waiter is registered before the job is read, so a settlement cannot slip between the
// read and the wait; at its deadline the caller re-reads the job once in case an event was missed.
// A settlement that wakes waiters is a CONSUMER span in the job's trace (context from the message
// headers), and each woken (or timed-out) request's span gets an event saying so.
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from '@partner/shared/telemetry/logger';
import type { JobView, SettlementEvent } from '@partner/shared/domain/jobs';
import type { FeedWake } from '@partner/shared/domain/events';
import { contextFromHeaders } from '@partner/shared/nats/client';
import { context, SpanKind, trace, tracer } from '@partner/shared/telemetry/tracing';
import { SettledJobs } from './jobs/settled-jobs.js';
import { KnownResources } from './cache/known-resources.js';

export interface Waiter<T = JobView> {
  /** Resolves with the settled job (a feed waiter: the wake-up), or undefined when the deadline passes first. */
  readonly settled: Promise<T | undefined>;
  /** Ends the wait now (settled resolves undefined); a no-op once it has ended. Safe to pass as a callback. */
  readonly cancel: () => void;
}

export interface WaiterMetrics {
  waiting(delta: number): void;
  outcome(o: 'settled' | 'timed_out'): void;
  /** A wait refused because this process already holds maxWaiters (answered at once instead). */
  rejected?(): void;
  /** A wait refused because its partner already holds maxPerHolder waits here (answered 429). */
  holderCapped?(): void;
  /** How many partners hold their whole per-partner share of this process's waits (changes by delta). */
  holdersAtCap?(delta: number): void;
  /** A woken feed reader answered from the wake-up's events, or by reading the feed again. */
  feedAnswered?(answered: 'from_wakeup' | 'reread'): void;
}

/** Why register() refused a wait: this process is full, or the partner holds its share of it. */
export type WaitRefusal = { reason: 'process_cap' } | { reason: 'holder_cap'; retryAfterS: number };

/** The holder of a partner's waits (the per-partner cap counts by it). */
export const holderOf = (owner: { tenantId: string; partnerId: string }): string => `${owner.tenantId}\u0000${owner.partnerId}`;

/** The waiter key of a partner's event feed (Prefer: wait on GET /v1/events); job ids never collide with it. */
export const feedKey = (owner: { tenantId: string; partnerId: string }): string => `feed:${holderOf(owner)}`;

export class SettlementWaiters {
  /** Waiters by job id, and feed readers by feedKey(partner), sharing one cap. */
  private readonly waiters = new Map<string, Set<(woken: JobView | FeedWake | undefined) => void>>();
  private readonly cancels = new Set<() => void>();
  /** Each holder's (partner's) waits here, by the time each one ends at the latest. */
  private readonly holders = new Map<string, Set<{ until: number }>>();
  private count = 0;
  private sub: Subscription | undefined;
  private feedSub: Subscription | undefined;

  constructor(
    private readonly maxWaiters: number,
    private readonly logger: Logger,
    private readonly metrics?: WaiterMetrics,
    /** Waits one holder (partner) may hold in this process: one partner cannot take every slot. */
    private readonly maxPerHolder: number = Number.POSITIVE_INFINITY,
    /** The settled jobs this gateway keeps (filled from every settlement heard here); none by default. */
    readonly settledJobs: SettledJobs = new SettledJobs(0),
    /** The submissions and quotes this gateway knows to be a partner's (filled from the create settlements heard here); none by default. */
    readonly knownResources: KnownResources = new KnownResources(0),
  ) {}

  /** Subscribes to settlement events (call once NATS is connected). */
  attach(nc: NatsConnection, subject: string): void {
    this.sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return this.logger.warn({ err: err.message }, 'settlement subscription error');
        // Every gateway hears every settlement: parse one only when someone here is waiting, or to
        // keep the settled job for the polls to come (and a new submission or quote for the checks to come).
        if (this.waiters.size === 0 && !this.settledJobs.enabled && !this.knownResources.enabled) return;
        let event: SettlementEvent;
        try {
          event = JSON.parse(msg.string()) as SettlementEvent;
        } catch {
          return;
        }
        if (typeof event.tenantId === 'string' && typeof event.partnerId === 'string' && typeof event.job?.id === 'string') {
          this.settledJobs.remember(event, event.job);
          this.knownResources.heard(event);
        }
        const set = this.waiters.get(event.job?.id);
        if (!set) return;
        const span = tracer().startSpan(
          `process ${msg.subject ?? subject}`,
          {
            kind: SpanKind.CONSUMER,
            attributes: {
              'messaging.system': 'nats',
              'messaging.operation.type': 'process',
              'messaging.destination.name': msg.subject ?? subject,
              'partner.job.id': event.job.id,
              'partner.waiters.woken': set.size,
            },
          },
          contextFromHeaders(msg.headers),
        );
        for (const wake of [...set]) wake(event.job);
        span.end();
      },
    });
  }

  /**
   * Subscribes to feed wake-ups (the events service stored an event of a partner; payload a FeedWake,
   * shared/domain/events.ts): wakes that partner's waiting feed readers with it. A reader answers from
   * the events it carries when they are its next page, and reads again otherwise
   * (resources/events/wake-page.ts).
   */
  attachFeed(nc: NatsConnection, subject: string): void {
    this.feedSub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return this.logger.warn({ err: err.message }, 'feed wake-up subscription error');
        if (this.waiters.size === 0) return;
        let wake: FeedWake;
        try {
          wake = JSON.parse(msg.string()) as FeedWake;
        } catch {
          return;
        }
        if (typeof wake?.tenantId !== 'string' || typeof wake.partnerId !== 'string') return;
        const set = this.waiters.get(feedKey({ tenantId: wake.tenantId, partnerId: wake.partnerId }));
        if (set) for (const w of [...set]) w(wake);
      },
    });
  }

  /** Counts how a woken feed reader was answered (partner_gateway_feed_wakeups_total). */
  feedAnswered(answered: 'from_wakeup' | 'reread'): void {
    this.metrics?.feedAnswered?.(answered);
  }

  get size(): number {
    return this.count;
  }

  /**
   * Registers a waiter for jobId (or a feedKey), held by `holder` (holderOf(partner)), that gives up
   * after timeoutMs. A feed waiter's settled resolves with the wake-up that woke it (FeedWake), or
   * undefined at the deadline; `accept`, when given, is asked first, as each one arrives, and a wake-up
   * it declines leaves the wait as it was (a feed reader that the wake-up's events show has nothing new
   * for its filter: resources/events/wake-page.ts). Refuses (returns a WaitRefusal) when the process already holds maxWaiters (the caller then
   * answers at once instead of holding the connection) or the holder already holds maxPerHolder
   * (the caller answers 429 with the seconds until one of the holder's waits ends at the latest).
   */
  register<T extends JobView | FeedWake = JobView>(jobId: string, timeoutMs: number, holder: string, accept?: (woken: T) => boolean): Waiter<T> | WaitRefusal {
    let held = this.holders.get(holder);
    if (held && held.size >= this.maxPerHolder) {
      this.metrics?.holderCapped?.();
      let first = Number.POSITIVE_INFINITY;
      for (const w of held) first = Math.min(first, w.until);
      return { reason: 'holder_cap', retryAfterS: Math.max(1, Math.ceil((first - Date.now()) / 1000)) };
    }
    if (this.count >= this.maxWaiters) {
      this.metrics?.rejected?.();
      return { reason: 'process_cap' };
    }
    if (!held) {
      held = new Set();
      this.holders.set(holder, held);
    }
    const holding = held;
    const slot = { until: Date.now() + timeoutMs };
    holding.add(slot);
    if (holding.size === this.maxPerHolder) {
      this.metrics?.holdersAtCap?.(1);
      this.logger.warn({ holder: holder.replace('\u0000', '/'), waits: holding.size }, 'a partner holds its whole share of waiting requests (MAX_WAITERS_PER_PARTNER); more get 429');
    }
    let set = this.waiters.get(jobId);
    if (!set) {
      set = new Set();
      this.waiters.set(jobId, set);
    }
    const bucket = set;
    // The waiting request's span (active at registration), told how its wait ended.
    const requestSpan = trace.getSpan(context.active());
    this.count++;
    this.metrics?.waiting(1);
    let done = false;
    let resolve!: (woken: T | undefined) => void;
    const settled = new Promise<T | undefined>((r) => (resolve = r));
    const finish = (woken: T | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.cancels.delete(cancel);
      bucket.delete(wake);
      if (bucket.size === 0 && this.waiters.get(jobId) === bucket) this.waiters.delete(jobId);
      if (holding.size === this.maxPerHolder) this.metrics?.holdersAtCap?.(-1);
      holding.delete(slot);
      if (holding.size === 0 && this.holders.get(holder) === holding) this.holders.delete(holder);
      this.count--;
      this.metrics?.waiting(-1);
      resolve(woken);
    };
    const wake = (woken: JobView | FeedWake | undefined) => {
      if (accept && woken && !accept(woken as T)) {
        requestSpan?.addEvent('feed woken, nothing for its filter: still waiting');
        return;
      }
      this.metrics?.outcome('settled');
      if (woken && 'status' in woken) requestSpan?.addEvent('job settled', { 'partner.job.id': woken.id, 'partner.job.status': woken.status });
      else requestSpan?.addEvent('feed woken');
      // A job's waiters hear settlements, a feed's wake-ups (keys never collide: feedKey).
      finish(woken as T | undefined);
    };
    const timer = setTimeout(() => {
      this.metrics?.outcome('timed_out');
      requestSpan?.addEvent('wait timed out', { 'partner.job.id': jobId });
      finish(undefined);
    }, timeoutMs);
    const cancel = () => finish(undefined);
    this.cancels.add(cancel);
    bucket.add(wake);
    return { settled, cancel };
  }

  /** Ends every wait now, as if its deadline had passed (graceful shutdown). */
  cancelAll(): void {
    for (const cancel of [...this.cancels]) cancel();
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.feedSub?.unsubscribe();
  }
}
