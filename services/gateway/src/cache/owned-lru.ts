// A bounded map of what one partner owns, keyed by its owner (tenant, partner) and an id: the
// gateway's in-memory answers (settled jobs, known submissions and quotes) share it. A partner only
// ever finds its own entries: another partner's id misses and is read through the service that owns
// it, which answers 404 as before. Bounded: the least recently used entry goes first once `max` are
// held (a Map keeps insertion order; a hit moves its entry to the end). max 0 keeps nothing.

export type Owner = { tenantId: string; partnerId: string };

export interface LruMetrics {
  /** A lookup answered from memory (hit) or not (miss: read through the owning service). */
  lookup?(outcome: 'hit' | 'miss'): void;
  /** Entries held now (changes by delta). */
  size(delta: number): void;
}

const keyOf = (owner: Owner, id: string): string => `${owner.tenantId}\u0000${owner.partnerId}\u0000${id}`;

export class OwnedLru<V> {
  private readonly entries = new Map<string, V>();

  constructor(
    /** Most entries held; 0 keeps none (every lookup misses). */
    private readonly max: number,
    private readonly metrics?: LruMetrics,
  ) {}

  /** Whether anything is kept (max > 0). */
  get enabled(): boolean {
    return this.max > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The partner's entry, when held (it becomes the most recently used). */
  get(owner: Owner, id: string): V | undefined {
    if (this.max === 0) return undefined;
    const key = keyOf(owner, id);
    const value = this.entries.get(key);
    this.metrics?.lookup?.(value === undefined ? 'miss' : 'hit');
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Keeps the partner's entry (the most recently used), letting the least recently used go past max. */
  set(owner: Owner, id: string, value: V): void {
    if (this.max === 0) return;
    const key = keyOf(owner, id);
    if (this.entries.delete(key)) this.metrics?.size(-1);
    this.entries.set(key, value);
    this.metrics?.size(1);
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.metrics?.size(-1);
    }
  }
}
