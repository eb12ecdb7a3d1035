import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '@partner/shared/telemetry/logger';
import type { JobView } from '@partner/shared/domain/jobs';
import type { GatewayContext } from '../context.js';
import { SettlementWaiters, type Waiter } from '../settlement-waiters.js';
import type { RouteDeps } from '../resources/deps.js';
import { answerOnSettlement } from './prefer-wait.js';
import { fakeNats } from '../settlement-waiters.test-helper.js';

const logger = createLogger('test', 'silent');

/** Just what answerOnSettlement touches of a Koa context: the response, the socket and the state. */
function fakeContext() {
  const res = Object.assign(new EventEmitter(), { destroyed: false });
  const socket = { destroyed: false };
  const caller = { tenant: 't', partnerId: 'p', clientId: 'c' };
  const ctx = { res, req: { socket }, state: { deadline: Date.now() + 1_000, caller } } as unknown as GatewayContext;
  /** The client going away, as Node reports it. */
  const disconnect = () => {
    res.destroyed = true;
    socket.destroyed = true;
    res.emit('close');
  };
  return { ctx, disconnect };
}

/** Delivers a settlement event for a job as the NATS subscription would. */
function fakeEvents(waiters: SettlementWaiters): (job: JobView) => void {
  const deliver = fakeNats(waiters);
  return (job) => deliver(JSON.stringify({ job, tenantId: 't', partnerId: 'p' }));
}

function fakeDeps(waiters: SettlementWaiters) {
  const GetJob = vi.fn();
  const deps = { config: { grpcTimeoutMs: 1_000 }, clients: { job: { GetJob } }, waiters } as unknown as RouteDeps;
  return { deps, GetJob };
}

describe('answerOnSettlement', () => {
  it('answers with the settled job when it settles', async () => {
    const waiters = new SettlementWaiters(10, logger);
    const publish = fakeEvents(waiters);
    const { deps } = fakeDeps(waiters);
    const { ctx } = fakeContext();
    const waiter = waiters.register('job_a', 60_000, 'tenant\u0000partner') as Waiter;
    const answer = vi.fn<(job: JobView | undefined) => void>();
    answerOnSettlement(ctx, deps, 'job_a', waiter, answer);
    expect(answer).not.toHaveBeenCalled();
    const job: JobView = { id: 'job_a', kind: 'submission.create', status: 'succeeded', result: {}, createdAt: 'c', updatedAt: 'u' };
    publish(job);
    await ctx.state.answer?.done;
    expect(answer).toHaveBeenCalledWith(job);
  });

  it('releases the waiter when the client goes away, and answers nobody without reading the job again', async () => {
    const waiters = new SettlementWaiters(10, logger);
    const { deps, GetJob } = fakeDeps(waiters);
    const { ctx, disconnect } = fakeContext();
    const waiter = waiters.register('job_a', 60_000, 'tenant\u0000partner') as Waiter;
    const answer = vi.fn<(job: JobView | undefined) => void>();
    answerOnSettlement(ctx, deps, 'job_a', waiter, answer);
    expect(waiters.size).toBe(1);
    disconnect();
    expect(waiters.size).toBe(0);
    await ctx.state.answer?.done;
    expect(answer).toHaveBeenCalledWith(undefined);
    expect(GetJob).not.toHaveBeenCalled();
  });

  it('keeps a failed re-read for the pipeline, even when it fails before the route has returned', async () => {
    const waiters = new SettlementWaiters(10, logger);
    const { deps, GetJob } = fakeDeps(waiters);
    const reread = new Promise<void>((resolve) =>
      GetJob.mockImplementation(async () => {
        resolve();
        throw new Error('job service down');
      }),
    );
    const { ctx } = fakeContext();
    const waiter = waiters.register('job_a', 1, 'tenant\u0000partner') as Waiter;
    answerOnSettlement(ctx, deps, 'job_a', waiter, vi.fn());
    await reread;
    // A turn of the event loop with nobody awaiting the answer yet: no unhandled rejection (vitest
    // fails the run on one), and the pipeline, awaiting it later, still gets the error.
    await new Promise((resolve) => setImmediate(resolve));
    await expect(ctx.state.answer!.done).rejects.toThrow();
  });

  it('releases the waiter at once when the client went away while the job was read', async () => {
    const waiters = new SettlementWaiters(10, logger);
    const { deps, GetJob } = fakeDeps(waiters);
    const { ctx, disconnect } = fakeContext();
    const waiter = waiters.register('job_a', 60_000, 'tenant\u0000partner') as Waiter;
    disconnect();
    const answer = vi.fn<(job: JobView | undefined) => void>();
    answerOnSettlement(ctx, deps, 'job_a', waiter, answer);
    expect(waiters.size).toBe(0);
    await ctx.state.answer?.done;
    expect(answer).toHaveBeenCalledWith(undefined);
    expect(GetJob).not.toHaveBeenCalled();
  });
});
