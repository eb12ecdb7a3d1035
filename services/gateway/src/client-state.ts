// Each client's current provisioning and revocation state (GetClientState on the auth service),
// applied to every request over the claims of its token: a disabled client, and a token issued before
// `client revoke-tokens`, are refused; permissions and the rate limit are the client's current ones.
// Read through a cache, so the hot path costs one Map lookup and no await: an entry is dropped the
// moment an admin command announces a change of its client on NATS (clientChangedSubject), and is
// read again from the auth service (gRPC) on the client's next request. Entries also expire after
// ttlMs, and after at most unpushedTtlMs while the NATS subscription is not live (changes could be
// missed then), so a change takes effect within seconds even without NATS.
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from '@partner/shared/telemetry/logger';
import type { RateLimit } from './middleware/rate-limit.js';

export interface ClientState {
  /** Disabled, or unknown to the auth service: its tokens are refused. */
  disabled: boolean;
  /** Tokens whose `tv` claim is below this were revoked. */
  tokenVersion: number;
  permissions: ReadonlySet<string>;
  /** The client's own limit; undefined when the gateway's default applies. */
  rateLimit: RateLimit | undefined;
}

export type ClientStateFetch = (clientId: string, timeoutMs: number) => Promise<ClientState>;

export class ClientStates {
  private readonly entries = new Map<string, { state: ClientState; at: number }>();
  private readonly loading = new Map<string, Promise<ClientState>>();
  /** Grows with every invalidation: a read that started before one is used once, not cached. */
  private generation = 0;
  private live = false;
  private sub: Subscription | undefined;

  constructor(
    private readonly fetchState: ClientStateFetch,
    private readonly opts: { ttlMs: number; unpushedTtlMs: number; maxEntries?: number; logger?: Logger; now?: () => number },
  ) {}

  /** The cached state while it is fresh (no await on the hot path), else undefined: call load(). */
  get(clientId: string, now = this.now()): ClientState | undefined {
    const e = this.entries.get(clientId);
    if (!e) return undefined;
    const ttl = this.live ? this.opts.ttlMs : Math.min(this.opts.ttlMs, this.opts.unpushedTtlMs);
    return now - e.at < ttl ? e.state : undefined;
  }

  /** Reads the state from the auth service (one read in flight per client) and caches it. */
  load(clientId: string, timeoutMs: number): Promise<ClientState> {
    const inflight = this.loading.get(clientId);
    if (inflight) return inflight;
    const generation = this.generation;
    const at = this.now();
    const p = this.fetchState(clientId, timeoutMs).then(
      (state) => {
        if (this.loading.get(clientId) === p) this.loading.delete(clientId);
        if (generation === this.generation) {
          if (!this.entries.has(clientId) && this.entries.size >= (this.opts.maxEntries ?? 100_000)) {
            this.entries.delete(this.entries.keys().next().value as string);
          }
          this.entries.set(clientId, { state, at });
        }
        return state;
      },
      (err: unknown) => {
        if (this.loading.get(clientId) === p) this.loading.delete(clientId);
        throw err;
      },
    );
    this.loading.set(clientId, p);
    return p;
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  invalidate(clientId: string): void {
    this.generation++;
    this.entries.delete(clientId);
    this.loading.delete(clientId);
  }

  invalidateAll(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }

  /**
   * Listens for announced changes. The cache counts as pushed (ttlMs) only while the subscription is
   * live: after a disconnect entries last unpushedTtlMs, and on reconnect everything is dropped, since
   * announcements may have been missed meanwhile.
   */
  attach(nc: NatsConnection, subject: string): void {
    this.sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return this.opts.logger?.warn({ err: err.message }, 'client change subscription error');
        let clientId: unknown;
        try {
          clientId = (JSON.parse(msg.string()) as { clientId?: unknown }).clientId;
        } catch {
          clientId = undefined;
        }
        if (typeof clientId === 'string') this.invalidate(clientId);
        else this.invalidateAll();
      },
    });
    void nc.flush().then(
      () => {
        this.invalidateAll();
        this.live = !nc.isClosed();
      },
      () => undefined,
    );
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect' || s.type === 'reconnecting') this.live = false;
        else if (s.type === 'reconnect') {
          this.invalidateAll();
          this.live = true;
        }
      }
      this.live = false;
    })();
  }

  /** Whether announced changes reach this cache (the subscription is live). */
  get pushed(): boolean {
    return this.live;
  }

  stop(): void {
    this.live = false;
    this.sub?.unsubscribe();
  }
}
