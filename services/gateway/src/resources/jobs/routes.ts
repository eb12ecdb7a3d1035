// GET /v1/jobs (jobs/read): the calling partner's jobs, newest first, for reconciliation (find the jobs
// still running, or the ones that failed, since a time); the query string is validated here, every bad
// parameter reported at once in `details` (400 validation_error), and the job service checks the same
// rules again and owns the cursors (signed, bound to partner and filters).
// GET /v1/jobs/{id} (jobs/read): the settled job, or the `processing` body with Retry-After; under
// Prefer: wait=N, held until the job settles or N seconds pass. POST /v1/jobs/{id}/cancel (the write
// permission of the job's kind): cancels a job no worker has claimed (200 with the cancelled job, the
// same again for a cancelled one; 409 job_not_cancelable once claimed or settled).
import type Router from '@koa/router';
import { isJobId } from '@partner/shared/domain/ids';
import { cancelPermissionOf, isSettled, JOB_KINDS, JOB_STATUS_FILTER, jobView, type JobView } from '@partner/shared/domain/jobs';
import type { Job__Output } from '@partner/shared/generated/partner/job/v1/Job';
import { grpcOptions, ownerOf, type GatewayContext, type GatewayState } from '../../context.js';
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { checkEnum, checkTimestamps, readListQuery } from '../../http/list-query.js';
import type { RouteDeps } from '../deps.js';
import { preferredWait, readJob, respondProcessing } from '../../jobs/responses.js';
import { answerOnSettlement, holdWait } from '../../jobs/prefer-wait.js';
import { unchangingBody } from '../../request-log/redact.js';

/** A settled job as GET /v1/jobs/{id} (and the job list) shows it. */
export function settledJobBody(job: JobView): Record<string, unknown> {
  return job.status === 'succeeded'
    ? { id: job.id, kind: job.kind, status: job.status, result: job.result, createdAt: job.createdAt, updatedAt: job.updatedAt }
    : { id: job.id, kind: job.kind, status: job.status, error: job.error, createdAt: job.createdAt, updatedAt: job.updatedAt };
}

const JOB_PARAMS = new Set(['limit', 'cursor', 'status', 'kind', 'createdSince', 'createdBefore']);
const JOB_KIND_NAMES: readonly string[] = Object.values(JOB_KINDS);

/** A job as the list shows it: settled as GET /v1/jobs/{id} shows it, unsettled as `processing` with its times. */
export function jobListItem(j: Job__Output): Record<string, unknown> {
  const job = jobView(j);
  if (isSettled(job)) return settledJobBody(job);
  return { id: job.id, kind: job.kind, status: 'processing', createdAt: job.createdAt, updatedAt: job.updatedAt };
}

/** Each settled job's body, made once: the job kept in memory is answered on every poll of it. */
const settledBodies = new WeakMap<JobView, Record<string, unknown>>();

function respondJob(ctx: GatewayContext, job: JobView): void {
  let body = settledBodies.get(job);
  if (!body) {
    // A settled job never changes, so neither does its body: the request log writes its text once.
    body = unchangingBody(settledJobBody(job));
    settledBodies.set(job, body);
  }
  ctx.status = 200;
  ctx.body = body;
}

export function jobRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  router.get('/jobs', deps.guard('jobs/read'), async (ctx) => {
    const { params, page } = readListQuery(ctx.querystring, JOB_PARAMS, (p, details) => {
      checkEnum(p, 'status', JOB_STATUS_FILTER.names, details);
      checkEnum(p, 'kind', JOB_KIND_NAMES, details);
      checkTimestamps(p, ['createdSince', 'createdBefore'], details);
    });
    const rawStatus = params.get('status');
    const status = rawStatus !== undefined && JOB_STATUS_FILTER.is(rawStatus) ? rawStatus : undefined;
    const res = await deps.clients.job.ListJobs(
      {
        ...ownerOf(ctx),
        ...page,
        ...(status ? { status: JOB_STATUS_FILTER.toProto(status) } : {}),
        kind: params.get('kind') ?? '',
        createdSince: params.get('createdSince') ?? '',
        createdBefore: params.get('createdBefore') ?? '',
      },
      grpcOptions(ctx, deps.config.grpcTimeoutMs),
    );
    ctx.body = { items: res.jobs.map(jobListItem), nextCursor: res.nextPageToken || null };
  });

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

  router.post('/jobs/:id/cancel', async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isJobId(id)) throw notFound('job');
    // The permission depends on the job's kind: read the job first (another partner's job is not
    // found, before any permission is judged, so it stays indistinguishable from a missing one).
    const job = await readJob(ctx, deps, id);
    const permission = cancelPermissionOf(job.kind);
    if (!permission) throw new DomainError('forbidden', `jobs of kind ${job.kind} cannot be cancelled`);
    await deps.guard(permission)(ctx, async () => {
      const { job: canceled } = await deps.clients.job.CancelJob({ jobId: id, ...ownerOf(ctx) }, grpcOptions(ctx, deps.config.grpcTimeoutMs));
      const view = jobView(canceled!);
      // A cancelled job is settled: kept for the polls to come, like one heard from its event.
      deps.waiters.settledJobs.remember(ownerOf(ctx), view);
      respondJob(ctx, view);
    });
  });
}
