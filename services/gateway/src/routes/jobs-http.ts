// How jobs are answered over HTTP, shared by every mutation route and GET /v1/jobs/{id}:
// the 202 handle, the settled job (200 result, or its error as an HTTP error with jobId), the
// `processing` body, and waiting for settlement under Prefer: wait.
import { DomainError } from '@partner/shared/errors';
import { isSettled, jobView, type JobView } from '@partner/shared/jobs';
import { grpcOptions, ownerOf, type GatewayContext } from '../context.js';
import { renderError } from '../middleware/errors.js';
import { parsePreferWait } from '../http/prefer.js';
import type { RouteDeps } from './deps.js';
import type { Waiter } from '../waiters.js';

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
  renderError(ctx, new DomainError(e.code, e.message, { retryable: e.retryable }), { jobId: job.id });
}

export function respondProcessing(ctx: GatewayContext, jobId: string): void {
  ctx.status = 200;
  ctx.set('Retry-After', String(RETRY_AFTER_S));
  ctx.body = { id: jobId, status: 'processing', retryAfter: RETRY_AFTER_S };
}

export async function readJob(ctx: GatewayContext, deps: RouteDeps, jobId: string): Promise<JobView> {
  const { job } = await deps.clients.job.GetJob(
    { jobId, ...ownerOf(ctx) },
    grpcOptions(ctx, deps.config.grpcTimeoutMs),
  );
  return jobView(job!);
}

/**
 * Waits for a registered waiter; at the deadline re-reads the job once (an event may have been
 * missed, e.g. while NATS was reconnecting). Then answers with the settled job, or undefined.
 */
async function awaitSettlement(
  ctx: GatewayContext,
  deps: RouteDeps,
  jobId: string,
  waiter: Waiter,
  answer: (settled: JobView | undefined) => void,
): Promise<void> {
  const woken = await waiter.settled;
  if (woken) return answer(woken);
  // The client went away: nobody to answer. (Not ctx.req.destroyed: a request whose body has been
  // read to its end is destroyed too, and a mutation's always has.)
  if (ctx.res.destroyed || ctx.req.socket.destroyed) return answer(undefined);
  ctx.state.deadline = Math.max(ctx.state.deadline, Date.now() + deps.config.grpcTimeoutMs);
  const reread = await readJob(ctx, deps, jobId);
  answer(isSettled(reread) ? reread : undefined);
}

/**
 * Answers the request once the wait ends, with answer(the settled job, or undefined when it is still
 * running). The route then returns, with nothing left that can fail: the pipeline awaits the answer
 * once the routes' frames are gone, so a waiting request holds little more than its socket. A client
 * that goes away releases its waiter.
 */
export function answerOnSettlement(
  ctx: GatewayContext,
  deps: RouteDeps,
  jobId: string,
  waiter: Waiter,
  answer: (settled: JobView | undefined) => void,
): void {
  // (It may have gone already, while the job was read.)
  if (ctx.res.destroyed) waiter.cancel();
  else ctx.res.once('close', waiter.cancel);
  const done = awaitSettlement(ctx, deps, jobId, waiter, answer);
  // Handled here as well: it may fail (its re-read) before the route returns and the pipeline awaits it.
  done.catch(() => undefined);
  ctx.state.answer = { done, cancel: waiter.cancel };
}
