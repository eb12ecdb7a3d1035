// The feed's single writer. It reads the events stream in stream order with an ordered consumer
// that starts right after the highest position stored (the durable progress lives in PostgreSQL,
// committed with the events themselves), and stores what it reads in batches, one transaction per
// batch, in order. Position = the message's stream sequence. Every batch transaction first takes a
// transaction-scoped advisory lock, so replicas (or a process that outlived its restart) never
// write at once; each re-reads the highest position under the lock and skips what is stored, and
// event ids are unique, so an event published twice (beyond JetStream's duplicate window) is
// stored once. Each stored event also gets its partner's next partner_seq (1, 2, 3, … per partner,
// in stream order) from the partner's feed_heads row, taken in the same transaction with an upsert
// that row-locks it: a partner's sequence is committed in order even if several writers ever ran at
// once. A reader's snapshot therefore always holds a prefix of each partner's feed: no event can be
// stored behind a position a cursor has passed. After each commit a wake-up per partner goes out
// on core NATS for the gateways' long-polling readers, carrying the partner's events of the commit
// as the feed serves them (feedWake), so a reader they are the next page of needs no read.
import type { JsMsg, NatsConnection } from 'nats';
import { DeliverPolicy } from 'nats';
import type { Logger } from '@partner/shared/telemetry/logger';
import { prepared, type Pool } from '@partner/shared/db/pg';
import { ensureEventsStream, natsNames } from '@partner/shared/nats/client';
import { endable } from '@partner/shared/nats/endable-messages';
import { isEventId, isEventType, isForEveryPartner, type EventMessage, type FeedWake, type FeedWakeEvent } from '@partner/shared/domain/events';
import type { FeedCursors, Owner } from './cursor.js';
import { toEvent } from './feed.js';
import { createHash } from 'node:crypto';
import { deliveryBody } from './webhooks/repo.js';

/**
 * The key of the feed writer's advisory lock (any bigint the schema does not use otherwise), which
 * feed_store takes (migrations/0009_feed_store.sql spells it in decimal).
 */
export const WRITER_LOCK = 0x65766e74; // "evnt", 1702260340
const BATCH_MAX = 500;

export interface WriterMetrics {
  stored(n: number): void;
  skipped(n: number): void;
  /** Seconds from a stored message's JetStream publish to the commit of its rows in the feed. */
  storeDelay?(seconds: number): void;
}

/** A wake-up carries at most this many of its partner's newly stored events … */
export const WAKE_EVENTS_MAX = 100;
/** … and at most this many bytes of them (JSON); beyond either it carries a prefix, or none (shared/domain/events.ts). */
export const WAKE_BYTES_MAX = 64 * 1024;

/** A row the batch stored, as STORE returns it. */
interface StoredRow {
  partner_seq: string;
  tenant_id: string;
  partner_id: string;
  event_id: string;
  position: string;
  type: string;
  timestamp: Date;
  data_json: string;
  queued: string;
}

/**
 * The wake-up of one partner after a commit: its head (`seq`, the old fields an older gateway reads)
 * and, when `cursors` is given, the partner's events stored by the commit (`rows`, in partner_seq
 * order, contiguous) as ListEvents returns them (feed.toEvent), each with its seq and the cursor past
 * it, after `after` (the cursor just before the first): as many as fit WAKE_EVENTS_MAX and
 * WAKE_BYTES_MAX, and none (a plain wake-up, so readers re-read) when not even the first fits.
 */
export function feedWake(owner: Owner, rows: Pick<StoredRow, 'partner_seq' | 'event_id' | 'type' | 'timestamp' | 'data_json'>[], cursors?: FeedCursors): FeedWake {
  const head = rows.at(-1)!.partner_seq;
  const wake: FeedWake = { tenantId: owner.tenantId, partnerId: owner.partnerId, seq: head };
  if (!cursors) return wake;
  const events: FeedWakeEvent[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, WAKE_EVENTS_MAX)) {
    const seq = BigInt(row.partner_seq);
    const e: FeedWakeEvent = { ...toEvent(row), seq: row.partner_seq, cursor: cursors.encode(seq, owner) };
    bytes += Buffer.byteLength(JSON.stringify(e));
    if (bytes > WAKE_BYTES_MAX) break;
    events.push(e);
  }
  if (events.length === 0) return wake;
  return { ...wake, after: cursors.encode(BigInt(events[0]!.seq) - 1n, owner), events };
}

export interface Parsed {
  position: bigint;
  msg: EventMessage;
}

function parse(m: JsMsg): EventMessage | undefined {
  try {
    const v = m.json<EventMessage>();
    const e = v?.event;
    if (typeof v.tenantId !== 'string' || typeof v.partnerId !== 'string' || !e || !isEventId(e.id) || !isEventType(e.type)) return undefined;
    if (typeof e.timestamp !== 'string' || Number.isNaN(Date.parse(e.timestamp))) return undefined;
    return v;
  } catch {
    return undefined;
  }
}

/** The highest stream position the feed has consumed, stored or swept (feed_stored_through, migrations/0009_feed_store.sql). */
export async function storedThrough(pool: Pool): Promise<bigint> {
  const r = await pool.query<{ p: string }>('SELECT feed_stored_through() AS p');
  return BigInt(r.rows[0]!.p);
}

/** Who an event for every partner is stored for. */
export type PartnerDirectory = () => Promise<{ tenantId: string; partnerId: string }[]>;

/**
 * An event for every partner (owner `*`/`*`: product.requirements_changed) as one copy per partner:
 * each a partner's own event at the same stream position, with an id derived from the original and
 * the partner (the same on every read of the stream, so a batch read again stores nothing twice).
 */
export function copiesForEveryPartner(p: Parsed, partners: { tenantId: string; partnerId: string }[]): Parsed[] {
  return partners.map((owner) => {
    const id = `evt_${createHash('sha256').update(`${p.msg.event.id}/${owner.tenantId}/${owner.partnerId}`).digest('hex').slice(0, 32)}`;
    return { position: p.position, msg: { tenantId: owner.tenantId, partnerId: owner.partnerId, event: { ...p.msg.event, id } } };
  });
}

/** How often the writer checks that its consumer still delivers while the stream grows (stallWatchdog). */
const STALL_CHECK_MS = 5_000;

/**
 * A batch's whole transaction, one round trip (services/events/migrations/0009_feed_store.sql): sent
 * outside a transaction, the call commits as it returns. feed_store takes the writer's lock
 * (WRITER_LOCK), makes its commit asynchronous, reads the stored position after the lock, refuses
 * (SQLSTATE LOST_COMMIT) a stored feed below `committed_through`, and stores the events past the
 * stored position and not stored yet (an event repeated in the batch once): their partner_seqs, the
 * events, their webhook deliveries.
 */
const STORE = 'SELECT * FROM feed_store($1, $2, $3, $4, $5, $6, $7, $8, $9)';

/** feed_store's error when the stored feed is below the writer's committed position (its DETAIL: the stored position). */
const LOST_COMMIT = 'EVLC1';

/** The stored feed is behind what this writer committed: a commit was lost (FeedWriter.committedThrough). */
export class LostCommitError extends Error {
  constructor(storedThrough: bigint, committedThrough: bigint) {
    super(`the stored feed ends at position ${storedThrough}, before ${committedThrough} that this writer committed (a commit lost in a crash of PostgreSQL); reading the stream again from the stored position`);
  }
}

export class FeedWriter {
  private stopped = false;
  private running: Promise<void> | undefined;
  private stopCurrent: (() => void) | undefined;
  private streamReady = false;
  /**
   * The highest stream position this writer has handled (stored, or skipped as stored or malformed):
   * with storedThrough, where the feed stands for the partner_events_writer_pending gauge.
   */
  handledThrough = 0n;
  /**
   * The highest stream position this writer's own committed batches stored (since its consumer last
   * started from the stored position). The stored position never falls below it unless PostgreSQL
   * lost a commit (the commits are asynchronous): then the batches after the stored position must be
   * read from the stream again, not skipped past (store()).
   */
  private committedThrough = 0n;

  constructor(
    private readonly pool: Pool,
    private readonly nc: NatsConnection,
    private readonly names: ReturnType<typeof natsNames>,
    private readonly opts: {
      stream: { replicas: number; duplicateWindowMs: number };
      logger: Logger;
      metrics?: WriterMetrics;
      partners?: PartnerDirectory;
      /** The feed's cursors: with them the wake-ups carry the stored events (feedWake); without, only the head. */
      cursors?: FeedCursors;
    },
  ) {}

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopCurrent?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.follow();
      } catch (err) {
        if (this.stopped) break;
        this.opts.logger.warn({ err: (err as Error).message }, 'feed writer interrupted; resuming from the stored position');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Reads the stream from the stored position and stores batches until stopped or something fails. */
  private async follow(): Promise<void> {
    const js = this.nc.jetstream({ timeout: 2_000 });
    if (!this.streamReady) {
      await ensureEventsStream(await this.nc.jetstreamManager({ timeout: 2_000 }), this.names, this.opts.stream);
      this.streamReady = true;
    }
    const from = await this.storedThrough();
    this.committedThrough = from;
    // A stream that restarted its sequence (its data was lost) would have every new event skipped as
    // already stored: say so loudly (docs/events.md, "Known limits").
    const info = await (await this.nc.jetstreamManager({ timeout: 2_000 })).streams.info(this.names.eventsStream);
    if (info.state.last_seq < from) {
      this.opts.logger.error(
        { storedThrough: from.toString(), streamLastSeq: info.state.last_seq },
        'the events stream is behind the stored feed (was it recreated?); new events are skipped until it catches up',
      );
    }
    const consumer = await js.consumers.get(this.names.eventsStream, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Number(from) + 1,
    });
    const messages = await consumer.consume({ max_messages: BATCH_MAX });
    // Ending (stop, or the stall watchdog) also ends the wait for the next message (endable).
    const stream = endable(messages);
    const end = stream.end;
    this.stopCurrent = end;
    // A stop() that came while the consumer was being made found nothing to close: close it now.
    if (this.stopped) end();
    const watchdog = this.stallWatchdog(from, end);
    try {
      let batch: JsMsg[] = [];
      for (;;) {
        const r = await stream.next();
        if (r.done) break;
        const m = r.value;
        batch.push(m);
        // Store what has arrived once nothing more is waiting (or a batch is full): one
        // transaction per burst, one per event when they trickle in. (The pending count includes
        // the message being handled.)
        if (batch.length >= BATCH_MAX || messages.getPending() <= 1) {
          const b = batch;
          batch = [];
          await this.store(b);
        }
        if (this.stopped) break;
      }
    } finally {
      clearInterval(watchdog);
      this.stopCurrent = undefined;
      end();
    }
    if (!this.stopped) throw new Error('the events stream consumer ended');
  }

  /**
   * Closes the consumer (`restart`) when it has delivered nothing for two checks while the stream
   * holds later events: an ordered consumer whose server died in a cluster can stop delivering
   * without an error (seen in the replica run with a NATS node killed, docs/reliability.md), and the
   * loop then resumes from the stored position with a new consumer. A restart re-reads at most what
   * was not stored; storing is idempotent by event id.
   */
  private stallWatchdog(from: bigint, restart: () => void): NodeJS.Timeout {
    const position = () => (this.handledThrough > from ? this.handledThrough : from);
    let seen = position();
    let checking = false;
    const timer = setInterval(() => {
      if (checking || this.stopped) return;
      const now = position();
      if (now !== seen) {
        seen = now;
        return;
      }
      checking = true;
      void this.nc
        .jetstreamManager({ timeout: 2_000 })
        .then((jsm) => jsm.streams.info(this.names.eventsStream))
        .then(
          (info) => {
            if (position() === seen && BigInt(info.state.last_seq) > seen) {
              this.opts.logger.warn({ handledThrough: seen.toString(), streamLastSeq: info.state.last_seq }, 'feed writer consumer stalled behind the stream; restarting it');
              restart();
            }
          },
          () => undefined,
        )
        .finally(() => {
          checking = false;
        });
    }, STALL_CHECK_MS);
    timer.unref();
    return timer;
  }

  private storedThrough(): Promise<bigint> {
    return storedThrough(this.pool);
  }

  /** Stores a batch (in stream order) in one transaction; then wakes the partners' readers. */
  private async store(batch: JsMsg[]): Promise<void> {
    let parsed: Parsed[] = [];
    for (const m of batch) {
      const msg = parse(m);
      if (msg) parsed.push({ position: BigInt(m.seq), msg });
      else this.opts.logger.error({ position: m.seq, subject: m.subject }, 'malformed message on the events stream; skipped');
    }
    // Events for every partner become one copy per partner, before the transaction (a failure to
    // learn the partners fails the batch, which is read again).
    if (this.opts.partners && parsed.some((p) => isForEveryPartner(p.msg))) {
      const partners = await this.opts.partners();
      parsed = parsed.flatMap((p) => (isForEveryPartner(p.msg) ? copiesForEveryPartner(p, partners) : [p]));
    }
    let r: { rows: StoredRow[] };
    try {
      // One round trip, the whole transaction (STORE). The commit does not wait for its WAL flush:
      // the stream is the record and the stored position commits with the events, so a crash loses
      // only a suffix of batches, which are read again and stored identically (same positions, ids
      // and partner_seqs); a delivery's settlement, a synchronous commit, flushes this one before it.
      r = await this.pool.query<StoredRow>(
        prepared(STORE, [
          this.committedThrough.toString(),
          parsed.map((p) => p.position.toString()),
          parsed.map((p) => p.msg.event.id),
          parsed.map((p) => p.msg.tenantId),
          parsed.map((p) => p.msg.partnerId),
          parsed.map((p) => p.msg.event.type),
          parsed.map((p) => p.msg.event.timestamp),
          parsed.map((p) => JSON.stringify(p.msg.event.data ?? null)),
          parsed.map((p) => deliveryBody(p.msg)),
        ]),
      );
    } catch (err) {
      const e = err as { code?: string; detail?: string };
      // A batch this writer committed is gone: PostgreSQL crashed before the asynchronous commit
      // reached its WAL, and came back before this writer saw an error. Storing this batch would
      // leave the lost one behind the stored position for good: read the stream again from there.
      if (e.code === LOST_COMMIT && e.detail) throw new LostCommitError(BigInt(e.detail), this.committedThrough);
      throw err;
    }
    const committedAt = Date.now();
    // In stream order (each partner's in partner_seq order: the wake-ups carry them so, and name each
    // partner's highest seq stored).
    const stored = r.rows.sort((a, b) => (BigInt(a.partner_seq) < BigInt(b.partner_seq) ? -1 : BigInt(a.partner_seq) > BigInt(b.partner_seq) ? 1 : 0));
    // Messages of the stream stored (an event for every partner is one message, stored as many rows).
    const storedPositions = new Set(stored.map((row) => BigInt(row.position)));
    const queued = Number(stored[0]?.queued ?? 0);
    for (const position of storedPositions) if (position > this.committedThrough) this.committedThrough = position;
    this.opts.metrics?.stored(stored.length);
    this.opts.metrics?.skipped(batch.length - storedPositions.size);
    for (const m of batch) {
      const seq = BigInt(m.seq);
      if (seq > this.handledThrough) this.handledThrough = seq;
      if (storedPositions.has(seq)) this.opts.metrics?.storeDelay?.(Math.max(0, committedAt - m.info.timestampNanos / 1e6) / 1000);
    }
    // The dispatchers look for due deliveries only when this batch made some.
    if (queued > 0) {
      try {
        this.nc.publish(this.names.webhooksDueSubject);
      } catch {
        // They poll too: the deliveries go out at their next look.
      }
    }
    // One wake-up per partner, naming the highest partner_seq stored for it (never a global position),
    // with the partner's events of this commit as far as they fit (feedWake).
    const byPartner = new Map<string, StoredRow[]>();
    for (const row of stored) {
      const key = `${row.tenant_id}\u0000${row.partner_id}`;
      const rows = byPartner.get(key);
      if (rows) rows.push(row);
      else byPartner.set(key, [row]);
    }
    for (const rows of byPartner.values()) {
      try {
        const w = feedWake({ tenantId: rows[0]!.tenant_id, partnerId: rows[0]!.partner_id }, rows, this.opts.cursors);
        this.nc.publish(this.names.feedWakeSubject, JSON.stringify(w));
      } catch (err) {
        // Readers still get the event at their deadline's re-read.
        this.opts.logger.warn({ err: (err as Error).message }, 'feed wake-up not published');
      }
    }
  }
}
