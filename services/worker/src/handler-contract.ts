// The contract between the consumer and the job handlers: a handler returns the job's result,
// throws JobFailed for an outcome the job must settle with, and lets anything else propagate (the
// message is then delivered again later).
import type { PromiseClient, serviceDefs } from '@partner/shared/grpc';
import type { JobCaller } from '@partner/shared/domain/jobs';
import type { RatingPlanLookup } from './rating-plans.js';
import type { ProductLookup } from './products.js';
import { DomainError } from '@partner/shared/domain/errors';

type Defs = ReturnType<typeof serviceDefs>;

export class JobFailed extends Error {
  constructor(readonly error: { code: string; message: string; retryable: boolean; detailsJson?: string }) {
    super(error.message);
  }
}

export interface HandlerContext {
  clients: { submission: PromiseClient<Defs['submission']>; policy: PromiseClient<Defs['policy']>; events: PromiseClient<Defs['events']> };
  /** The product catalogue, cached (see products.ts). */
  product: ProductLookup;
  /** Products' current rating plans, kept (see rating-plans.ts). */
  ratingPlans: RatingPlanLookup;
  /** Sandbox directives in externalRef are honoured (UAT only). */
  sandbox: boolean;
  /** Resolves after ms, or rejects when the worker is stopping. */
  sleep(ms: number): Promise<void>;
  /** Due transitions per call of a test clock's advance (TEST_CLOCK_ADVANCE_BATCH; the service's default when absent). */
  advanceBatch?: number;
}

/** The job a handler runs: from the job message itself, or read from the job service (StartJob). */
export interface JobToRun {
  id: string;
  kind: string;
  caller: JobCaller;
  /** When the job was created (ISO 8601; '' when its message predates this field): a receipt's receivedAt. */
  createdAt: string;
}

export type Handler = (job: JobToRun, payload: unknown, ctx: HandlerContext) => Promise<unknown>;

/**
 * For a call to another service: a refusal that retrying cannot change (not retryable) settles the
 * job as failed with it; anything retryable propagates, so the job is delivered again.
 */
export function failOnRefusal(err: unknown): never {
  // A record on a test clock that is advancing (issue 44): the job fails at once with the contract's
  // retryable 409 (the partner retries once the advance settles), it is not delivered again.
  if (err instanceof DomainError && err.code === 'clock_advancing') throw new JobFailed({ code: err.code, message: err.message, retryable: true });
  if (err instanceof DomainError && !err.retryable) {
    throw new JobFailed({ code: err.code, message: err.message, retryable: false, ...(err.details ? { detailsJson: JSON.stringify(err.details) } : {}) });
  }
  throw err;
}

/**
 * What every request a handler makes carries: the job's id (the services are idempotent by it) and
 * the owner the job acts for.
 */
export function jobScope(job: JobToRun): { jobId: string; owner: { tenantId: string; partnerId: string } } {
  return { jobId: job.id, owner: { tenantId: job.caller.tenantId, partnerId: job.caller.partnerId } };
}

/**
 * What a job settles with when its handler threw something other than JobFailed, or undefined when
 * the delivery must be retried. Only a dependency's retryable refusal (unavailable, rate_limited, an
 * unexpected `internal` from a service, which may be a passing fault) is retried, and only while
 * the worker is not stopping. Anything else fails the same way on every delivery, so the job fails at
 * once, not retryable: a non-retryable refusal with its own code (e.g. validation_error for a value
 * the database cannot store), and an error that is no DomainError at all (a handler tripping over
 * the job's own payload) as `internal`.
 */
export function deterministicFailure(err: unknown): { code: string; message: string; retryable: false } | undefined {
  if (err instanceof DomainError) {
    if (err.retryable) return undefined;
    return { code: err.code, message: err.message, retryable: false };
  }
  return { code: 'internal', message: 'the job could not be processed: its input is not usable; do not retry it unchanged', retryable: false };
}
