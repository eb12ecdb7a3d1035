// The webhook dispatcher's loop. It claims due deliveries (store.ts) whenever it is woken — an event
// stored (the feed writer's wake-up), deliveries queued by ping or recover, a send finished — or
// when the earliest pending delivery falls due (at most pollMs apart). Claims respect two bounds per
// endpoint, so one slow, hanging or failing receiver never delays the others: at most
// `endpointConcurrency` sends at once, and at most `endpointMaxInFlight` deliveries held (sending or
// queued behind those sends); all endpoints together hold at most `maxInFlight`. Idle (nothing
// pending), it sends the database nothing until a wake-up arrives. Deliveries it cannot claim — of a
// disabled endpoint, or of an endpoint whose lane here is full — never count as due, and a look that
// claimed nothing though something seemed due waits at least RETRY_FLOOR_MS: it never spins.
import type { Logger } from '@partner/shared/telemetry/logger';
import type { Pool } from '@partner/shared/db/pg';
import type { natsNames } from '@partner/shared/nats/client';
import type { RecordedEvent } from '@partner/shared/nats/event-outbox';
import { Batcher, rowCausedError } from '@partner/shared/db/batcher';
import { claimDue, nextDue, release, settleFailure, settleSuccesses, type Claimed, type Settled, type Success } from './store.js';
import type { SendResult, Sender } from './sender.js';
import type { DispatcherConfig } from './config.js';

/** The settings the loop reads (documented on DispatcherConfig). */
export type DispatchSettings = Pick<
  DispatcherConfig,
  | 'timeoutMs'
  | 'retryScheduleMs'
  | 'retryJitter'
  | 'endpointConcurrency'
  | 'endpointMaxInFlight'
  | 'maxInFlight'
  | 'disableAfterMs'
  | 'pollMs'
  | 'batchMaxSize'
  | 'batchInFlight'
  | 'keyEncryptionKeys'
>;

export interface DispatchMetrics {
  attempt(r: SendResult): void;
  settled(s: Settled): void;
  inFlight(n: number): void;
  /** A look for due deliveries (one claim query). */
  looked?(): void;
  /** Successes settled together in one transaction. */
  settleBatch?(n: number): void;
}

/** One endpoint's deliveries in this process: those sending and those queued behind them. */
interface Lane {
  sending: number;
  queue: Claimed[];
}

/** When a failed attempt is tried again: the schedule's wait ± jitter, stretched to a Retry-After within the schedule's bounds. */
export function retryTime(failuresBefore: number, r: Pick<SendResult, 'retryAfterS'>, s: Pick<DispatchSettings, 'retryScheduleMs' | 'retryJitter'>, now = Date.now(), random = Math.random): Date | undefined {
  const base = s.retryScheduleMs[failuresBefore];
  if (base === undefined) return undefined;
  let wait = base * (1 + (random() * 2 - 1) * s.retryJitter);
  if (r.retryAfterS !== undefined) wait = Math.max(wait, Math.min(r.retryAfterS * 1000, Math.max(...s.retryScheduleMs)));
  return new Date(now + Math.round(wait));
}

/**
 * Shortest sleep after a look that claimed nothing while a delivery seemed due (rows another
 * dispatcher is claiming at that moment, or an endpoint's share of the claim window used up): a
 * wake-up (an event stored, a send finished) still comes at once.
 */
export const RETRY_FLOOR_MS = 100;

export class Dispatcher {
  private readonly lanes = new Map<string, Lane>();
  private held = 0;
  private pumping: Promise<void> | undefined;
  private again = false;
  /** Deliveries the last look claimed. */
  private lastClaimed = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly sends = new Set<Promise<void>>();
  /** Lease length: every delivery an endpoint holds can be sent, one timeout per round of sends, plus one more timeout to spare. */
  private readonly leaseMs: number;
  /**
   * Successful attempts are settled together (shared/db/batcher.ts): a lone success is settled at
   * once, alone; those finishing while DB_BATCH_IN_FLIGHT settlements run share the next
   * transaction (up to DB_BATCH_MAX_SIZE). A batch failing with a row-caused error (a deadlock
   * among them) is split down to the delivery that caused it.
   */
  private readonly successes: Batcher<Success, Settled>;

  constructor(
    private readonly pool: Pool,
    private readonly names: ReturnType<typeof natsNames>,
    private readonly sender: Sender,
    private readonly s: DispatchSettings,
    private readonly logger: Logger,
    private readonly hooks: { metrics?: DispatchMetrics; disabled?(event: RecordedEvent): void } = {},
  ) {
    this.leaseMs = s.timeoutMs * (Math.ceil(s.endpointMaxInFlight / s.endpointConcurrency) + 1);
    const off = s.batchMaxSize <= 1;
    this.successes = new Batcher((items) => settleSuccesses(pool, items), {
      maxSize: s.batchMaxSize,
      maxInFlight: off ? Number.POSITIVE_INFINITY : s.batchInFlight,
      keyOf: (i) => i.d.deliveryId,
      splittable: rowCausedError,
      ...(hooks.metrics?.settleBatch ? { observe: hooks.metrics.settleBatch } : {}),
    });
  }

  start(): void {
    this.wake();
  }

  /** Look for due deliveries now. */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.pumping = this.pump()
      .then((n) => void (this.lastClaimed = n))
      .catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'webhook dispatcher: claiming failed; trying again shortly'))
      .finally(() => {
        this.pumping = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        } else void this.schedule();
      });
  }

  /**
   * Sleeps until the earliest claimable delivery is due (or its lease lapses), at most pollMs; idle,
   * no query until woken. Never a tight loop: at least RETRY_FLOOR_MS when the last look claimed nothing.
   */
  private async schedule(): Promise<void> {
    if (this.stopped) return;
    let wait = this.s.pollMs;
    // Holding its most, it claims nothing until a send finishes, and that wakes it.
    if (this.held >= this.s.maxInFlight) return this.sleep(wait);
    try {
      const full = [...this.room()].filter(([, n]) => n <= 0).map(([id]) => id);
      const at = await nextDue(this.pool, full);
      if (at) wait = Math.min(wait, Math.max(this.lastClaimed === 0 ? RETRY_FLOOR_MS : 5, at.getTime() - Date.now() + 5));
    } catch {
      // Poll at the usual pace while the database is away.
    }
    this.sleep(wait);
  }

  private sleep(ms: number): void {
    if (this.stopped || this.pumping) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), ms);
  }

  private room(): Map<string, number> {
    const room = new Map<string, number>();
    for (const [id, lane] of this.lanes) room.set(id, this.s.endpointMaxInFlight - lane.sending - lane.queue.length);
    return room;
  }

  /** Claims due deliveries until none is left or this process holds its most; returns how many. */
  private async pump(): Promise<number> {
    let total = 0;
    while (!this.stopped && this.held < this.s.maxInFlight) {
      const limit = Math.min(200, this.s.maxInFlight - this.held);
      this.hooks.metrics?.looked?.();
      const claimed = await claimDue(this.pool, {
        limit,
        room: this.room(),
        defaultRoom: this.s.endpointMaxInFlight,
        leaseMs: this.leaseMs,
        keks: this.s.keyEncryptionKeys,
        onSecretError: (endpointId, err) =>
          this.logger.error({ endpointId, err: err.message }, 'webhook signing secret does not open (a KEK missing from AUTH_KEY_ENCRYPTION_KEY?); the delivery is not sent'),
      });
      for (const d of claimed) this.enqueue(d);
      total += claimed.length;
      if (claimed.length < limit) break;
    }
    return total;
  }

  private enqueue(d: Claimed): void {
    let lane = this.lanes.get(d.endpointId);
    if (!lane) {
      lane = { sending: 0, queue: [] };
      this.lanes.set(d.endpointId, lane);
    }
    lane.queue.push(d);
    this.held++;
    this.hooks.metrics?.inFlight(this.held);
    this.drainLane(d.endpointId, lane);
  }

  private drainLane(endpointId: string, lane: Lane): void {
    while (!this.stopped && lane.sending < this.s.endpointConcurrency && lane.queue.length > 0) {
      const d = lane.queue.shift()!;
      lane.sending++;
      const p = this.deliver(d).finally(() => {
        this.sends.delete(p);
        lane.sending--;
        this.held--;
        this.hooks.metrics?.inFlight(this.held);
        if (lane.sending === 0 && lane.queue.length === 0) this.lanes.delete(endpointId);
        else this.drainLane(endpointId, lane);
        // Room was made: more may be claimed.
        this.wake();
      });
      this.sends.add(p);
    }
  }

  private async deliver(d: Claimed): Promise<void> {
    const r = await this.sender.send({ endpointId: d.endpointId, eventId: d.eventId, url: d.url, body: d.body, secrets: d.secrets });
    this.hooks.metrics?.attempt(r);
    const log = {
      deliveryId: d.deliveryId,
      endpointId: d.endpointId,
      eventId: d.eventId,
      outcome: r.outcome,
      status: r.status,
      ms: Math.round(r.durationMs),
    };
    let settled: Settled;
    try {
      settled = r.ok
        ? await this.successes.call({ d, o: r })
        : await settleFailure(this.pool, this.names, d, r, {
            retryAt: retryTime(d.failures, r, this.s),
            gone: r.status === 410,
            disableAfterMs: this.s.disableAfterMs,
          });
    } catch (err) {
      // The lease lapses and the delivery is tried again (at least once).
      this.logger.warn({ ...log, err: (err as Error).message }, 'webhook attempt not recorded; the delivery will be tried again');
      return;
    }
    this.hooks.metrics?.settled(settled);
    if (settled.kind === 'disabled') {
      this.logger.warn({ ...log, reason: settled.reason }, 'webhook endpoint disabled');
      this.hooks.disabled?.(settled.event);
    } else if (r.ok) {
      this.logger.debug(log, 'webhook delivered');
    } else {
      this.logger.info({ ...log, error: r.error, response: r.responseBody?.slice(0, 512), settled: settled.kind }, 'webhook attempt failed');
    }
  }

  /** Stops claiming, lets sends in flight finish within budgetMs, and gives back what was never sent. */
  async stop(budgetMs: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pumping;
    const queued = [...this.lanes.values()].flatMap((l) => l.queue.splice(0));
    await release(this.pool, queued).catch((err: unknown) =>
      this.logger.warn({ err: (err as Error).message, deliveries: queued.length }, 'queued deliveries not released; they are sent when their lease lapses'),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.sends), new Promise((r) => (timer = setTimeout(r, budgetMs)))]);
    clearTimeout(timer);
  }
}
