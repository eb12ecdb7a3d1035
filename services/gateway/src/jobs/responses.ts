// How jobs are answered over HTTP, for every mutation and GET /v1/jobs/{id}: the 202 handle, the
// settled job (200 result, or its error as an HTTP error with jobId), the `processing` body, and the
// Prefer: wait preference. Waiting itself is in prefer-wait.ts; running a mutation in mutations.ts.
import { DomainError } from '@partner/shared/domain/errors';
import { jobView, type JobView } from '@partner/shared/domain/jobs';
import { grpcOptions, ownerOf, type GatewayContext } from '../context.js';
import { renderError } from '../middleware/errors.js';
import { parsePreferWait } from '../http/prefer.js';
import type { RouteDeps } from '../resources/deps.js';

export const RETRY_AFTER_S = 5;

export const statusUrl = (deps: RouteDeps, jobId: string): string => `${deps.config.baseUrl}/v1/jobs/${jobId}`;

/** The Prefer: wait the request asked for (clamped), recorded as applied, with Vary: Prefer. */
export function preferredWait(ctx: GatewayContext): number | undefined {
  ctx.vary('Prefer');
  const wait = parsePreferWait(ctx.get('prefer'));
  if (wait !== undefined) ctx.set('Preference-Applied', `wait=${wait}`);
  return wait;
}

export function respondAccepted(ctx: GatewayContext, deps: RouteDeps, jobId: string): void {
  const url = statusUrl(deps, jobId);
  ctx.status = 202;
  ctx.set('Location', url);
  ctx.set('Retry-After', String(RETRY_AFTER_S));
  ctx.body = { id: jobId, status: 'accepted', statusUrl: url };
}

/** A mutation whose job settled in time: 200 with the result, or the job's error with jobId. */
export function respondSettledMutation(ctx: GatewayContext, job: JobView): void {
  if (job.status === 'succeeded') {
    ctx.status = 200;
    ctx.body = job.result;
    return;
  }
  const e = job.error ?? { code: 'internal', message: 'the job failed', retryable: true };
  renderError(ctx, new DomainError(e.code, e.message, { retryable: e.retryable, ...(e.details ? { details: e.details as never } : {}) }), { jobId: job.id });
}

export function respondProcessing(ctx: GatewayContext, jobId: string): void {
  ctx.status = 200;
  ctx.set('Retry-After', String(RETRY_AFTER_S));
  ctx.body = { id: jobId, status: 'processing', retryAfter: RETRY_AFTER_S };
}

/**
 * The caller's job: from the settled jobs this gateway keeps (no call), or read through the job
 * service (a settled job read is kept for the polls to come; unsettled and unknown ones never are).
 */
export async function readJob(ctx: GatewayContext, deps: RouteDeps, jobId: string): Promise<JobView> {
  const owner = ownerOf(ctx);
  const kept = deps.waiters.settledJobs.get(owner, jobId);
  if (kept) return kept;
  const { job } = await deps.clients.job.GetJob({ jobId, ...owner }, grpcOptions(ctx, deps.config.grpcTimeoutMs));
  const view = jobView(job!);
  deps.waiters.settledJobs.remember(owner, view);
  return view;
}

