// Adaptive batching ("group commit") for a durable step that many concurrent calls make: the job
// service's SubmitJob and SettleJob, the submission service's CreateSubmission. Up to `maxInFlight`
// batches run at once; a call that finds one free starts a batch of its own at once, so a lone call
// never waits for company (no fill timer) and sequential latency is what it was. Calls that arrive
// while every slot is busy queue, and the next free slot takes all of them (up to `maxSize`) as one
// batch: one statement, one round trip, one commit for all. The busier the step, the bigger its
// batches; with one call at a time, every batch is a batch of one.
//
// Each call gets its own answer only after its batch (its statement) committed. A batch that fails
// with an error a single call's data can cause (a constraint, a value the column cannot hold, a
// deadlock between two batches) is split in halves and each half run again, down to the single bad
// call, which alone gets the error; any other error (the database unreachable) fails the whole batch
// at once, as it would have failed each call. Calls with the same key (an idempotency key, a job id)
// never share a batch: one statement may not touch one row twice.
import { Histogram, type Registry } from 'prom-client';

export interface BatcherOptions<I> {
  /** Most calls in one batch (1 turns batching off: every call runs alone). */
  maxSize: number;
  /** Batches running at once; a call that finds fewer starts its own batch immediately. */
  maxInFlight: number;
  /** Calls with the same key never share a batch. */
  keyOf?: (item: I) => string | undefined;
  /** Whether a batch that failed with this error should be split to find the call that caused it. */
  splittable?: (err: unknown) => boolean;
  /** Told the size of every batch run (splits included). */
  observe?: (size: number) => void;
}

interface Pending<I, O> {
  item: I;
  resolve(out: O): void;
  reject(err: unknown): void;
}

export class Batcher<I, O> {
  private queue: Pending<I, O>[] = [];
  private inFlight = 0;

  /**
   * @param run Runs one batch in one transaction; returns one result per item, in the items' order.
   *   A batch of one is the single-call path: run it as the step always ran.
   */
  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly opts: BatcherOptions<I>,
  ) {}

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Calls queued and not yet in a batch (for tests and metrics). */
  get waiting(): number {
    return this.queue.length;
  }

  private pump(): void {
    while (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      this.inFlight++;
      void this.execute(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /** The oldest queued calls, up to maxSize, skipping (and keeping queued) those whose key is taken. */
  private take(): Pending<I, O>[] {
    const max = Math.max(1, this.opts.maxSize);
    const keyOf = this.opts.keyOf;
    if (!keyOf) return this.queue.splice(0, max);
    const batch: Pending<I, O>[] = [];
    const rest: Pending<I, O>[] = [];
    const keys = new Set<string>();
    for (const p of this.queue) {
      const key = keyOf(p.item);
      if (batch.length >= max || (key !== undefined && keys.has(key))) {
        rest.push(p);
        continue;
      }
      if (key !== undefined) keys.add(key);
      batch.push(p);
    }
    this.queue = rest;
    return batch;
  }

  private async execute(batch: Pending<I, O>[]): Promise<void> {
    this.opts.observe?.(batch.length);
    let outs: O[];
    try {
      outs = await this.run(batch.map((p) => p.item));
      if (outs.length !== batch.length) throw new Error(`batch of ${batch.length} returned ${outs.length} results`);
    } catch (err) {
      if (batch.length > 1 && (this.opts.splittable?.(err) ?? false)) {
        const half = Math.ceil(batch.length / 2);
        await Promise.all([this.execute(batch.slice(0, half)), this.execute(batch.slice(half))]);
      } else {
        for (const p of batch) p.reject(err);
      }
      return;
    }
    batch.forEach((p, i) => p.resolve(outs[i]!));
  }
}

/**
 * SQLSTATE classes a single row can cause: data exceptions (22), integrity constraints (23), a
 * deadlock or serialization failure between two batches (40), program limits (54). A batch failing
 * with one of these is split; connection errors and the rest fail it whole.
 */
export function rowCausedError(err: unknown): boolean {
  // A batch run in withTx fails with what dbError made of the database's error: look at its cause.
  const cause = err instanceof Error && err.cause !== undefined ? err.cause : err;
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|23|40|54)/.test(code);
}

const histograms = new WeakMap<Registry, Histogram<'step'>>();

/** The batch-size histogram every batched step of a process reports to (label `step`). */
export function batchSizeHistogram(registry: Registry): Histogram<'step'> {
  let h = histograms.get(registry);
  if (!h) {
    h = new Histogram({
      name: 'partner_db_batch_size',
      help: 'Calls committed together in one statement, by step (SubmitJob, SettleJob, CreateSubmission); 1 = a call that ran alone.',
      labelNames: ['step'],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128],
      registers: [registry],
    });
    histograms.set(registry, h);
  }
  return h;
}

/**
 * A batched database step of a service: sized by DB_BATCH_MAX_SIZE and DB_BATCH_IN_FLIGHT, split on
 * row-caused errors, its batch sizes in partner_db_batch_size{step}. DB_BATCH_MAX_SIZE=1 turns
 * batching off: calls are not held to DB_BATCH_IN_FLIGHT at a time, exactly as without a batcher.
 */
export function dbBatcher<I, O>(
  step: string,
  run: (items: I[]) => Promise<O[]>,
  opts: { config: { batchMaxSize: number; batchInFlight: number }; registry: Registry; keyOf?: (item: I) => string | undefined },
): Batcher<I, O> {
  const sizes = batchSizeHistogram(opts.registry);
  sizes.zero({ step });
  const off = opts.config.batchMaxSize <= 1;
  return new Batcher(run, {
    maxSize: opts.config.batchMaxSize,
    // Batching off: every call runs alone and at once, as many at a time as the pool allows.
    maxInFlight: off ? Number.POSITIVE_INFINITY : opts.config.batchInFlight,
    splittable: rowCausedError,
    observe: (n) => sizes.observe({ step }, n),
    ...(opts.keyOf ? { keyOf: opts.keyOf } : {}),
  });
}
