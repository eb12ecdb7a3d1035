// Submissions and quotes this gateway knows to be a partner's, kept in memory so the checks that only
// ask "is this the caller's?" (before a quote, a withdraw, an upload, a clearance job or a bind is
// accepted, or a submission's quotes are listed) cost no gRPC call. Neither is ever deleted, and
// neither ever changes owner, so an entry is never stale. It is filled only from what proves it: a
// submission.create or quote.create job that succeeded (the settlement events every gateway already
// hears) and this gateway's own reads. Keyed by the owning partner (cache/owned-lru.ts): another
// partner's id misses and is read through the service that owns it, which answers 404 as before. The
// job that follows reads the resource again and judges its state; only ownership is taken from here.
import { JOB_KINDS, type SettlementEvent } from '@partner/shared/domain/jobs';
import { OwnedLru, type Owner } from './owned-lru.js';

export type KnownResource = 'submission' | 'quote';

export interface KnownResourcesMetrics {
  /** A check answered from memory (hit) or not (miss: asked the owning service). */
  lookup(resource: KnownResource, outcome: 'hit' | 'miss'): void;
  /** Entries held now (changes by delta). */
  size(delta: number): void;
}

export class KnownResources {
  private readonly known: OwnedLru<true>;

  constructor(
    /** Most entries held; 0 keeps none (every check asks the owning service). */
    max: number,
    private readonly metrics?: KnownResourcesMetrics,
  ) {
    this.known = new OwnedLru(max, metrics && { size: (d) => metrics.size(d) });
  }

  get enabled(): boolean {
    return this.known.enabled;
  }

  get size(): number {
    return this.known.size;
  }

  /** Whether the resource is known to be the partner's (false: ask the service that owns it). */
  has(owner: Owner, resource: KnownResource, id: string): boolean {
    if (!this.known.enabled) return false;
    const hit = this.known.get(owner, `${resource}:${id}`) === true;
    this.metrics?.lookup(resource, hit ? 'hit' : 'miss');
    return hit;
  }

  /** The resource was read as the partner's. */
  remember(owner: Owner, resource: KnownResource, id: string): void {
    this.known.set(owner, `${resource}:${id}`, true);
  }

  /** A settlement heard: a submission.create or quote.create that succeeded names the partner's new resources. */
  heard(event: SettlementEvent): void {
    const { job } = event;
    if (job.status !== 'succeeded' || typeof job.result !== 'object' || job.result === null) return;
    const result = job.result as { submissionId?: unknown; quotes?: unknown };
    if (job.kind === JOB_KINDS.submissionCreate && typeof result.submissionId === 'string') {
      this.remember(event, 'submission', result.submissionId);
    } else if (job.kind === JOB_KINDS.quoteCreate && Array.isArray(result.quotes)) {
      for (const q of result.quotes as { quoteId?: unknown }[]) {
        if (typeof q?.quoteId === 'string') this.remember(event, 'quote', q.quoteId);
      }
    }
  }
}
