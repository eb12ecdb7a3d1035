// Jobs: every mutation is carried out as one. Reading a job, listing them, following one until it
// settles (never polling sooner than Retry-After says), and cancelling one that has not started.
import { PartnerAbortError, PartnerError, PartnerTimeoutError } from './errors.js';
import type { JobListItem, JobListParams } from './list-types.js';
import type { CallOptions, WaitOptions } from './options.js';
import { parseRetryAfter, sleep } from './timing.js';
import { paginate, passOn, seg, type Transport, type WithResponse } from './transport.js';
import type { Job, JobCanceled, Page, SettledJob } from './types.js';

/** Poll interval when an answer carries no Retry-After (the API's own hint is 5 s). */
export const DEFAULT_POLL_SECONDS = 5;

export class Jobs {
  constructor(
    private readonly transport: Transport,
    /** Prefer: wait=N on each poll, unless the call says otherwise. */
    private readonly pollWaitSeconds: number,
  ) {}

  async get<T>(jobIdOrStatusUrl: string, opts: CallOptions & { wait?: number }): Promise<Job<T>> {
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
  async cancel(jobIdOrStatusUrl: string, opts: CallOptions): Promise<WithResponse<JobCanceled>> {
    const id = jobIdOf(jobIdOrStatusUrl);
    return (await this.transport.request<JobCanceled>({ method: 'POST', path: `/v1/jobs/${seg(id)}/cancel`, ...opts })).body;
  }

  async list(params: JobListParams, opts: CallOptions): Promise<Page<JobListItem>> {
    return (await this.transport.request<Page<JobListItem>>({ method: 'GET', path: '/v1/jobs', query: { ...params }, ...opts })).body;
  }

  iterate(params: Omit<JobListParams, 'cursor'>, opts: CallOptions): AsyncGenerator<JobListItem> {
    return paginate(params, (p) => this.list(p, opts));
  }

  /** Polls the job until it settles (at this client's base URL, so the token goes nowhere else). */
  async waitFor<T>(jobIdOrStatusUrl: string, opts: WaitOptions): Promise<SettledJob<T>> {
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
