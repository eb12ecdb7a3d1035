// Settled jobs this gateway has seen, kept in memory so a poll of one (GET /v1/jobs/{id}) costs no
// gRPC call. A job never changes once settled (succeeded, failed or canceled), and jobs are never
// deleted, so an entry is never stale: it is filled only from a settled job (the settlement events
// every gateway already hears, and its own reads), keyed by the owning partner and the job id, so a
// partner only ever finds its own jobs (another partner's id misses and goes to the job service,
// which answers 404 as before). Unsettled jobs are never kept. Bounded: the least recently used entry
// goes first once `max` are held (cache/owned-lru.ts).
import { isSettled, type JobView } from '@partner/shared/domain/jobs';
import { OwnedLru, type LruMetrics, type Owner } from '../cache/owned-lru.js';

export type SettledJobsMetrics = LruMetrics;

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

export class SettledJobs {
  private readonly jobs: OwnedLru<JobView>;

  constructor(
    /** Most entries held; 0 keeps none (every read goes to the job service). */
    max: number,
    metrics?: SettledJobsMetrics,
  ) {
    this.jobs = new OwnedLru(max, metrics);
  }

  /** Whether this gateway keeps any (max > 0). */
  get enabled(): boolean {
    return this.jobs.enabled;
  }

  get size(): number {
    return this.jobs.size;
  }

  /** The partner's settled job, when this gateway holds it. */
  get(owner: Owner, jobId: string): JobView | undefined {
    return this.jobs.get(owner, jobId);
  }

  /** Keeps a job of the partner if it is settled (an unsettled one is ignored). */
  remember(owner: Owner, job: JobView): void {
    if (isSettled(job)) this.jobs.set(owner, job.id, canonical(job));
  }
}
