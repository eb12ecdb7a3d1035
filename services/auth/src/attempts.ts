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

export class AttemptGuard {
  private readonly bySource: WindowCounter;
  private readonly byClient: WindowCounter;

  constructor(private readonly opts: AttemptGuardOptions) {
    this.bySource = new WindowCounter(opts.windowMs, opts.maxEntries ?? 100_000);
    this.byClient = new WindowCounter(opts.windowMs, opts.maxEntries ?? 100_000);
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
