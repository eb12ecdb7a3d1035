// GET /v1/jobs/{id} (jobs/read): the settled job, or the `processing` body with Retry-After; under
// Prefer: wait=N, held until the job settles or N seconds pass.
import type Router from '@koa/router';
import { isJobId } from '@partner/shared/domain/ids';
import { isSettled, type JobView } from '@partner/shared/domain/jobs';
import type { GatewayContext, GatewayState } from '../context.js';
import { notFound } from '@partner/shared/domain/errors';
import type { RouteDeps } from './deps.js';
import { preferredWait, readJob, respondProcessing } from '../jobs/responses.js';
import { answerOnSettlement, holdWait } from '../jobs/prefer-wait.js';

/** A settled job as GET /v1/jobs/{id} (and the job list) shows it. */
export function settledJobBody(job: JobView): Record<string, unknown> {
  return job.status === 'succeeded'
    ? { id: job.id, kind: job.kind, status: job.status, result: job.result, createdAt: job.createdAt, updatedAt: job.updatedAt }
    : { id: job.id, kind: job.kind, status: job.status, error: job.error, createdAt: job.createdAt, updatedAt: job.updatedAt };
}

function respondJob(ctx: GatewayContext, job: JobView): void {
  ctx.status = 200;
  ctx.body = settledJobBody(job);
}

export function jobRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  router.get('/jobs/:id', deps.guard('jobs/read'), async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isJobId(id)) throw notFound('job');
    const wait = preferredWait(ctx);
    // Register before reading, so a settlement between the read and the wait is not missed.
    const waiter = wait ? holdWait(ctx, deps, id, wait * 1000) : undefined;
    let job: JobView;
    try {
      job = await readJob(ctx, deps, id);
    } catch (err) {
      waiter?.cancel();
      // Nothing was waited for: the preference does not apply to an error.
      ctx.remove('Preference-Applied');
      throw err;
    }
    if (isSettled(job)) {
      waiter?.cancel();
      return respondJob(ctx, job);
    }
    if (!waiter) return respondProcessing(ctx, id);
    answerOnSettlement(ctx, deps, id, waiter, (settled) => (settled ? respondJob(ctx, settled) : respondProcessing(ctx, id)));
  });
}
