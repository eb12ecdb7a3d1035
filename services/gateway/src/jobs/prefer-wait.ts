// Waiting for a job to settle under Prefer: wait: the request is answered from the pipeline once its
// waiter is woken by the settlement event (settlement-waiters.ts), or at the deadline after one re-read.
import { DomainError } from '@partner/shared/domain/errors';
import { isSettled, type JobView } from '@partner/shared/domain/jobs';
import type { FeedWake } from '@partner/shared/domain/events';
import { ownerOf, type GatewayContext } from '../context.js';
import type { RouteDeps } from '../resources/deps.js';
import { holderOf, type Waiter } from '../settlement-waiters.js';
import { readJob } from './responses.js';

/**
 * Holds a wait for `key` (a job id or a feedKey) of up to waitMs for the calling partner (`accept`:
 * SettlementWaiters.register), or:
 * - at this process's cap (MAX_WAITERS), undefined: the request is answered at once, and the
 *   preference was not honoured (no Preference-Applied);
 * - when the partner already holds its share (MAX_WAITERS_PER_PARTNER), 429 rate_limited with
 *   Retry-After, thrown before anything has been done for the request.
 */
export function holdWait<T extends JobView | FeedWake = JobView>(
  ctx: GatewayContext,
  deps: RouteDeps,
  key: string,
  waitMs: number,
  accept?: (woken: T) => boolean,
): Waiter<T> | undefined {
  const held = deps.waiters.register<T>(key, waitMs, holderOf(ownerOf(ctx)), accept);
  if (!('reason' in held)) return held;
  ctx.remove('Preference-Applied');
  if (held.reason === 'process_cap') return undefined;
  ctx.set('Retry-After', String(held.retryAfterS));
  throw new DomainError(
    'rate_limited',
    `this partner already holds ${deps.config.maxWaitersPerPartner} waiting requests (Prefer: wait) on this gateway; retry after ${held.retryAfterS} s, or without Prefer: wait`,
  );
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
