// Settled jobs this gateway has seen, kept in memory so a poll of one (GET /v1/jobs/{id}) costs no
// gRPC call. A job never changes once settled (succeeded, failed or canceled), and jobs are never
// deleted, so an entry is never stale: it is filled only from a settled job (the settlement events
// every gateway already hears, and its own reads), keyed by the owning partner and the job id, so a
// partner only ever finds its own jobs (another partner's id misses and goes to the job service,
// which answers 404 as before). Unsettled jobs are never kept. Bounded: the least recently used entry
// goes first once `max` are held (a Map keeps insertion order; a hit moves its entry to the end).
import { isSettled, type JobView } from '@partner/shared/domain/jobs';

export interface SettledJobsMetrics {
  /** A lookup answered from memory (hit) or not (miss: read through the job service). */
  lookup(outcome: 'hit' | 'miss'): void;
  /** Entries held now (changes by delta). */
  size(delta: number): void;
}

type Owner = { tenantId: string; partnerId: string };

/**
 * The job as jobView() builds it from the job service's answer, key for key: a settlement event's
 * error comes from a jsonb column, whose keys PostgreSQL orders by length, so the same error would
 * otherwise print as {code, details, message, retryable} from memory and {code, message, retryable,
 * details} from a read.
 */
function canonical(job: JobView): JobView {
  if (!job.error) return job;
  const { code, message, retryable, details } = job.error;
  return { ...job, error: { code, message, retryable, ...(details !== undefined ? { details } : {}) } };
}

const keyOf = (owner: Owner, jobId: string): string => `${owner.tenantId}\u0000${owner.partnerId}\u0000${jobId}`;

export class SettledJobs {
  private readonly jobs = new Map<string, JobView>();

  constructor(
    /** Most entries held; 0 keeps none (every read goes to the job service). */
    private readonly max: number,
    private readonly metrics?: SettledJobsMetrics,
  ) {}

  /** Whether this gateway keeps any (max > 0). */
  get enabled(): boolean {
    return this.max > 0;
  }

  get size(): number {
    return this.jobs.size;
  }

  /** The partner's settled job, when this gateway holds it. */
  get(owner: Owner, jobId: string): JobView | undefined {
    if (this.max === 0) return undefined;
    const key = keyOf(owner, jobId);
    const job = this.jobs.get(key);
    this.metrics?.lookup(job ? 'hit' : 'miss');
    if (job) {
      this.jobs.delete(key);
      this.jobs.set(key, job);
    }
    return job;
  }

  /** Keeps a job of the partner if it is settled (an unsettled one is ignored). */
  remember(owner: Owner, job: JobView): void {
    if (this.max === 0 || !isSettled(job)) return;
    const key = keyOf(owner, job.id);
    if (this.jobs.delete(key)) this.metrics?.size(-1);
    this.jobs.set(key, canonical(job));
    this.metrics?.size(1);
    while (this.jobs.size > this.max) {
      const oldest = this.jobs.keys().next().value as string;
      this.jobs.delete(oldest);
      this.metrics?.size(-1);
    }
  }
}
