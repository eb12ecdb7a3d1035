// Submissions this gateway knows to be a partner's, kept in memory so the checks that only ask "is
// this submission the caller's?" (before a quote, a withdraw, an upload or a clearance job is
// accepted, or the quotes are listed) cost no gRPC call. A submission is never deleted and never
// changes owner, so an entry is never stale. It is filled only from what proves it: a
// submission.create job that succeeded (the settlement events every gateway already hears) and this
// gateway's own reads of the submission. Keyed by the owning partner (cache/owned-lru.ts): another
// partner's id misses and is read through the submission service, which answers 404 as before. The
// job that follows reads the submission again and judges its state; only ownership is taken from here.
import { JOB_KINDS, type SettlementEvent } from '@partner/shared/domain/jobs';
import { OwnedLru, type LruMetrics, type Owner } from './owned-lru.js';

export class KnownSubmissions {
  private readonly known: OwnedLru<true>;

  constructor(
    /** Most entries held; 0 keeps none (every check asks the submission service). */
    max: number,
    metrics?: LruMetrics,
  ) {
    this.known = new OwnedLru(max, metrics);
  }

  get enabled(): boolean {
    return this.known.enabled;
  }

  get size(): number {
    return this.known.size;
  }

  /** Whether the submission is known to be the partner's (false: ask the submission service). */
  has(owner: Owner, submissionId: string): boolean {
    return this.known.get(owner, submissionId) === true;
  }

  /** The submission was read as the partner's. */
  remember(owner: Owner, submissionId: string): void {
    this.known.set(owner, submissionId, true);
  }

  /** A settlement heard: a submission.create that succeeded names the partner's new submission. */
  heard(event: SettlementEvent): void {
    const { job } = event;
    if (job.kind !== JOB_KINDS.submissionCreate || job.status !== 'succeeded') return;
    const id = (job.result as { submissionId?: unknown } | undefined)?.submissionId;
    if (typeof id === 'string') this.remember(event, id);
  }
}
