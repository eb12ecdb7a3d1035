// Waiting for a job to settle under Prefer: wait: the request is answered from the pipeline once its
// waiter is woken by the settlement event (waiters.ts), or at the deadline after one re-read.
import { isSettled, type JobView } from '@partner/shared/jobs';
import type { GatewayContext } from '../context.js';
import type { RouteDeps } from '../routes/deps.js';
import type { Waiter } from '../waiters.js';
import { readJob } from './responses.js';

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
