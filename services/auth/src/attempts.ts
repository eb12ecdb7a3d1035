// Credential-stuffing protection for the token endpoint. Failed client authentications are counted
// per source address and per client id in a sliding window:
//  - a source with too many failures is refused (429) until its window passes;
//  - failures for a client id slow down further *failed* attempts for it (up to maxDelayMs), so
//    guessing one client's secret is slow while the client itself, presenting the right secret, is
//    never delayed or locked out.
export interface AttemptGuardOptions {
  windowMs: number;
  maxFailuresPerSource: number;
  /** Failures for one client id before failed attempts for it are slowed down. */
  slowAfter: number;
  maxDelayMs: number;
  maxEntries?: number;
}

class WindowCounter {
  private readonly hits = new Map<string, number[]>();
  constructor(
    private readonly windowMs: number,
    private readonly maxEntries: number,
  ) {}

  count(key: string, now: number): number {
    const list = this.hits.get(key);
    if (!list) return 0;
    while (list.length && list[0]! <= now - this.windowMs) list.shift();
    if (!list.length) this.hits.delete(key);
    return list.length;
  }

  add(key: string, now: number): number {
    let list = this.hits.get(key);
    if (!list) {
      if (this.hits.size >= this.maxEntries) this.hits.delete(this.hits.keys().next().value as string);
      list = [];
      this.hits.set(key, list);
    }
    list.push(now);
    if (list.length > 1000) list.shift();
    return this.count(key, now);
  }

  /** Seconds until the oldest hit in the window leaves it. */
  retryAfterS(key: string, now: number): number {
    const oldest = this.hits.get(key)?.[0];
    return oldest === undefined ? 0 : Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
  }
}

/** Why begin() refused an attempt, and for how long. */
export interface AttemptRefusal {
  limit: 'failed_attempts' | 'concurrent_attempts';
  retryAfterS: number;
  /** Failed attempts of the source in the window. */
  failed: number;
  /** Attempts of the source still being evaluated. */
  running: number;
  /** maxFailuresPerSource. */
  max: number;
}

/** The token endpoint's sentence for a refusal: which limit, and when to come back. */
export function refusalDescription(r: AttemptRefusal, windowMs: number): string {
  const window = `${Math.round(windowMs / 1000)} s`;
  return r.limit === 'failed_attempts'
    ? `too many failed client authentications from this address (${r.failed} in the last ${window}, at most ${r.max}); retry after ${r.retryAfterS} s`
    : `too many token requests from this address at once (${r.running} in progress and ${r.failed} failed in the last ${window}, at most ${r.max} together); retry after ${r.retryAfterS} s`;
}

export class AttemptGuard {
  private readonly bySource: WindowCounter;
  private readonly byClient: WindowCounter;
  /** Attempts of each source begun and not yet over: they count against its limit while they run. */
  private readonly running = new Map<string, number>();

  constructor(private readonly opts: AttemptGuardOptions) {
    this.bySource = new WindowCounter(opts.windowMs, opts.maxEntries ?? 100_000);
    this.byClient = new WindowCounter(opts.windowMs, opts.maxEntries ?? 100_000);
  }

  /**
   * Begins an attempt of the source, before anything is checked: undefined when it may go on (then
   * call finish() exactly once when it is over), or why it may not and how long it must wait. The
   * attempt counts against the source's limit from now on, so concurrent attempts cannot all pass the
   * check before the first failure is recorded: at most maxFailuresPerSource attempts are evaluated
   * per window. The refusal says which limit was reached: failures alone (`failed_attempts`), or
   * failures and attempts still running together (`concurrent_attempts`, which clears as they end).
   */
  begin(source: string, now = Date.now()): AttemptRefusal | undefined {
    const running = this.running.get(source) ?? 0;
    const failed = this.bySource.count(source, now);
    const limit = this.opts.maxFailuresPerSource;
    if (failed >= limit) return { limit: 'failed_attempts', retryAfterS: this.bySource.retryAfterS(source, now), failed, running, max: limit };
    if (failed + running >= limit) return { limit: 'concurrent_attempts', retryAfterS: 1, failed, running, max: limit };
    this.running.set(source, running + 1);
    return undefined;
  }

  /**
   * Ends an attempt begun with begin(): a failed client authentication is recorded (returns how long
   * to hold the failed response, see recordFailure); any other outcome frees its place.
   */
  finish(source: string, failure?: { clientId: string | undefined }, now = Date.now()): number {
    const running = (this.running.get(source) ?? 1) - 1;
    if (running > 0) this.running.set(source, running);
    else this.running.delete(source);
    return failure ? this.recordFailure(source, failure.clientId, now) : 0;
  }

  /** Seconds the source must wait, or 0 when it may try. */
  sourceBlockedFor(source: string, now = Date.now()): number {
    return this.bySource.count(source, now) >= this.opts.maxFailuresPerSource ? this.bySource.retryAfterS(source, now) : 0;
  }

  /** Records a failure; returns how long to hold the failed response (the client-id slowdown). */
  recordFailure(source: string, clientId: string | undefined, now = Date.now()): number {
    this.bySource.add(source, now);
    if (!clientId) return 0;
    const n = this.byClient.add(clientId, now);
    if (n <= this.opts.slowAfter) return 0;
    return Math.min(this.opts.maxDelayMs, 100 * 2 ** Math.min(10, n - this.opts.slowAfter - 1));
  }
}
