// The mutation pattern (docs/api.md, "Mutations"): a fresh Idempotency-Key and Prefer: wait=15 on
// every mutation; on 202 the job is followed honouring Retry-After (jobs.ts); a resend after a
// dropped connection carries the same key (transport.ts), so the server answers with the same job
// and never makes a duplicate; a job that failed with a retryable error is tried again under a new key.
import { PartnerApiError, PartnerTimeoutError } from './errors.js';
import { DEFAULT_POLL_SECONDS, stillFollowing, type Jobs } from './jobs.js';
import type { MutationOptions } from './options.js';
import { backoffMs, parseRetryAfter, sleep } from './timing.js';
import { attachResponse, lastResponseOf, passOn, type RequestSpec, type Transport, type WithResponse } from './transport.js';
import type { JobHandle } from './wire-types.js';

/** What a mutation answered without polling: the settled result, or the job handle. */
export type MutationOutcome<T> =
  | { settled: true; result: T; replayed: boolean }
  | { settled: false; job: JobHandle; replayed: boolean; retryAfterSeconds: number };

export class Mutations {
  constructor(
    private readonly transport: Transport,
    private readonly jobs: Jobs,
    /** Prefer: wait=N, unless the call says otherwise. */
    private readonly wait: number,
  ) {}

  /**
   * Sends a mutation and, when it is accepted as a job, polls it to the end. A job that failed with
   * a retryable error is tried again with a new Idempotency-Key (the old key would replay the
   * failure), unless the caller chose the key.
   */
  async mutate<T>(spec: () => RequestSpec, opts: MutationOptions): Promise<WithResponse<T>> {
    const deadline = opts.timeoutMs !== undefined ? Date.now() + opts.timeoutMs : undefined;
    const rounds = opts.maxRetries !== undefined ? opts.maxRetries + 1 : this.transport.maxAttempts;
    for (let round = 1; ; round++) {
      const key = opts.idempotencyKey ?? crypto.randomUUID();
      try {
        const left = deadline !== undefined ? deadline - Date.now() : undefined;
        const wait = left !== undefined ? Math.min(opts.wait ?? this.wait, Math.max(0, Math.floor(left / 1000))) : opts.wait;
        const outcome = await this.send<T>(spec(), key, { ...opts, ...(wait !== undefined ? { wait } : {}) });
        if (outcome.settled) return outcome.result as WithResponse<T>;
        opts.onAccepted?.(outcome.job);
        // The 202's Retry-After is the time to the first poll.
        const firstPollMs = outcome.retryAfterSeconds * 1000;
        if (deadline !== undefined && Date.now() + firstPollMs > deadline) {
          throw new PartnerTimeoutError(`job ${outcome.job.id} did not settle in time; read it later with getJob`, outcome.job.id);
        }
        const jobId = outcome.job.id;
        await stillFollowing(jobId, opts.signal, () => sleep(firstPollMs, opts.signal));
        const job = await this.jobs.waitFor<T>(jobId, {
          ...opts,
          ...(deadline !== undefined ? { timeoutMs: Math.max(0, deadline - Date.now()) } : {}),
        });
        if (job.status === 'succeeded') {
          const polled = lastResponseOf(job);
          return attachResponse(job.result as WithResponse<T>, { status: 200, requestId: polled?.requestId, jobId, replayed: outcome.replayed });
        }
        throw PartnerApiError.fromJob(job);
      } catch (err) {
        const retry = err instanceof PartnerApiError && err.jobId !== undefined && err.retryable && !opts.idempotencyKey && round < rounds;
        if (!retry) throw err;
        const delay = Math.max((err.retryAfterSeconds ?? 0) * 1000, backoffMs(round, this.transport.backoff));
        if (deadline !== undefined && Date.now() + delay > deadline) throw err;
        await sleep(delay, opts.signal);
      }
    }
  }

  /** One mutation request without polling, under the caller's key or a fresh one. */
  start<T>(spec: RequestSpec, opts: Omit<MutationOptions, 'timeoutMs' | 'onPoll'>): Promise<MutationOutcome<T>> {
    return this.send<T>(spec, opts.idempotencyKey ?? crypto.randomUUID(), opts);
  }

  /** One mutation request (with its resends) under `key`: 200 → the result, 202 → the handle. */
  private async send<T>(spec: RequestSpec, key: string, opts: Omit<MutationOptions, 'timeoutMs' | 'onPoll'>): Promise<MutationOutcome<T>> {
    const wait = Math.max(0, Math.min(30, Math.floor(opts.wait ?? this.wait)));
    const res = await this.transport.request<T | JobHandle>({
      ...spec,
      ...passOn(opts),
      headers: { ...spec.headers, 'idempotency-key': key, prefer: `wait=${wait}` },
      holdSeconds: wait,
    });
    const replayed = res.headers.get('idempotent-replayed') === 'true';
    if (res.status === 202) {
      const retryAfterSeconds = parseRetryAfter(res.headers.get('retry-after')) ?? DEFAULT_POLL_SECONDS;
      return { settled: false, job: res.body as JobHandle, replayed, retryAfterSeconds };
    }
    return { settled: true, result: res.body as T, replayed };
  }
}
