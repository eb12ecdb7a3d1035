// Jobs (client.jobs): every mutation is carried out as one. Reading a job, listing them, following
// one until it settles (never polling sooner than Retry-After says), and cancelling one that has not
// started. The job types are generated from the OpenAPI document (wire-types.ts).
import { PartnerAbortError, PartnerError, PartnerTimeoutError } from './errors.js';
import type { CallOptions, WaitOptions } from './options.js';
import { parseRetryAfter, sleep } from './timing.js';
import { paginate, passOn, seg, type Transport, type WithResponse } from './transport.js';
import type { Page } from './types.js';
import type * as wire from './wire-types.js';
import type { Job, JobCanceled, JobFailed, JobListItem, JobSucceeded } from './wire-types.js';

export type { Job, JobCanceled, JobFailed, JobHandle, JobListItem, JobProcessing, JobSucceeded } from './wire-types.js';

/**
 * A job's status as GET /v1/jobs/{id} shows it: `processing` until it settles, then `succeeded`,
 * `failed` or `canceled`. New statuses may be added within /v1 only as an additive change.
 */
export type JobStatus = Job['status'];

/** The `error` of a cancelled job: always code `canceled`, never retryable. */
export type CanceledErrorObject = JobCanceled['error'];

export type SettledJob<T = unknown> = JobSucceeded<T> | JobFailed | JobCanceled;

/** What a job does: the mutation that queued it. Open: new kinds may appear within /v1, as the document says. */
export type JobKind = wire.JobKind | (string & {});

/**
 * GET /v1/jobs's filters: `processing` = not settled yet; `canceled` = cancelled before it started.
 * `kind` is any JobKind, a newer one too.
 */
export interface JobListParams extends Omit<wire.ListJobsQuery, 'kind'> {
  kind?: JobKind;
}

/** Poll interval when an answer carries no Retry-After (the API's own hint is 5 s). */
export const DEFAULT_POLL_SECONDS = 5;

export class Jobs {
  constructor(
    private readonly transport: Transport,
    /** Prefer: wait=N on each poll, unless the call says otherwise. */
    private readonly pollWaitSeconds: number,
  ) {}

  /** GET /v1/jobs/{id}: the settled job, or `processing`. `wait` holds the request up to that many seconds. */
  async get<T = unknown>(jobIdOrStatusUrl: string, opts: CallOptions & { wait?: number } = {}): Promise<Job<T>> {
    const id = jobIdOf(jobIdOrStatusUrl);
    const wait = opts.wait ?? 0;
    return (
      await this.transport.request<Job<T>>({
        method: 'GET',
        path: `/v1/jobs/${seg(id)}`,
        ...(wait > 0 ? { headers: { prefer: `wait=${wait}` }, holdSeconds: wait } : {}),
        ...opts,
      })
    ).body;
  }

  /**
   * POST /v1/jobs/{id}/cancel: not itself a job, answered at once. Resolves with the cancelled job
   * (also when it was cancelled before); a job that has started or settled is a JobNotCancelableError.
   * Of a cancel and a worker racing, exactly one wins, and the answer says which. Safe to resend after
   * a dropped connection: a second cancel answers as the first did (200 again, or 409 again).
   */
  async cancel(jobIdOrStatusUrl: string, opts: CallOptions = {}): Promise<WithResponse<JobCanceled>> {
    const id = jobIdOf(jobIdOrStatusUrl);
    return (await this.transport.request<JobCanceled>({ method: 'POST', path: `/v1/jobs/${seg(id)}/cancel`, ...opts })).body;
  }

  /** GET /v1/jobs: one page of the partner's jobs, newest first. */
  async list(params: JobListParams = {}, opts: CallOptions = {}): Promise<Page<JobListItem>> {
    return (await this.transport.request<Page<JobListItem>>({ method: 'GET', path: '/v1/jobs', query: { ...params }, ...opts })).body;
  }

  /** Every job matching the filters, page after page. */
  iterate(params: Omit<JobListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<JobListItem> {
    return paginate(params, (p) => this.list(p, opts));
  }

  /**
   * Polls the job until it settles, never sooner than Retry-After says, and returns it (succeeded,
   * failed or canceled). Takes the job id or its statusUrl; the poll goes to this client's base URL,
   * so the token is never sent anywhere else.
   */
  async waitFor<T = unknown>(jobIdOrStatusUrl: string, opts: WaitOptions = {}): Promise<SettledJob<T>> {
    const id = jobIdOf(jobIdOrStatusUrl);
    return stillFollowing(id, opts.signal, () => this.poll<T>(id, opts));
  }

  private async poll<T>(id: string, opts: WaitOptions): Promise<SettledJob<T>> {
    const deadline = opts.timeoutMs !== undefined ? Date.now() + opts.timeoutMs : Infinity;
    const pollWait = opts.pollWaitSeconds ?? this.pollWaitSeconds;
    for (;;) {
      const left = deadline - Date.now();
      const wait = Math.max(0, Math.min(pollWait, Math.floor(left / 1000)));
      const res = await this.transport.request<Job<T>>({
        method: 'GET',
        path: `/v1/jobs/${seg(id)}`,
        ...(wait > 0 ? { headers: { prefer: `wait=${wait}` }, holdSeconds: wait } : {}),
        ...passOn(opts),
      });
      const job = res.body;
      if (job.status !== 'processing') return job;
      opts.onPoll?.(job);
      const afterS = Math.max(parseRetryAfter(res.headers.get('retry-after')) ?? DEFAULT_POLL_SECONDS, job.retryAfter ?? 0, 1);
      if (Date.now() + afterS * 1000 > deadline) {
        throw new PartnerTimeoutError(`job ${id} did not settle in time; read it later with getJob`, id);
      }
      await sleep(afterS * 1000, opts.signal);
    }
  }
}

/** Runs `wait` for job `id`; when the caller's signal aborts it, a PartnerAbortError naming the job. */
export async function stillFollowing<R>(id: string, signal: AbortSignal | undefined, wait: () => Promise<R>): Promise<R> {
  try {
    return await wait();
  } catch (err) {
    if (signal?.aborted && !(err instanceof PartnerError)) {
      throw new PartnerAbortError(`stopped waiting for job ${id}; it goes on: follow it with waitForJob('${id}')`, id, { cause: err });
    }
    throw err;
  }
}

/** The job id of a handle id or a statusUrl (…/v1/jobs/{id}). */
function jobIdOf(idOrUrl: string): string {
  if (/^https?:\/\//i.test(idOrUrl)) {
    const last = new URL(idOrUrl).pathname.split('/').filter(Boolean).pop();
    if (!last) throw new TypeError(`not a job statusUrl: ${idOrUrl}`);
    return decodeURIComponent(last);
  }
  return idOrUrl;
}
