// Runs a mutation as a job (docs/api.md, "Mutations"): Idempotency-Key handling, submission to
// the job service, and the answer — 202 with the handle, or under Prefer: wait the settled outcome.
import { newJobId } from '@partner/shared/domain/ids';
import { isSettled, jobView, type JobKind, type JobView } from '@partner/shared/domain/jobs';
import { callerOf, grpcOptions, ownerOf, type GatewayContext } from '../context.js';
import { fingerprint, parseIdempotencyKey } from '../http/idempotency.js';
import type { RouteDeps } from '../resources/deps.js';
import { preferredWait, readJob, respondAccepted, respondSettledMutation } from './responses.js';
import { answerOnSettlement, holdWait } from './prefer-wait.js';
import type { Waiter } from '../settlement-waiters.js';

export interface Mutation {
  kind: JobKind;
  payload: unknown;
  /** The route's path parameters as the route normalised them (ids), for the idempotency scope. */
  ids?: Record<string, string>;
  /** Parts of the request that make it "the same request" under one Idempotency-Key. */
  fingerprintOf: unknown;
}

/** The request's Idempotency-Key, parsed (a malformed one refused) once however often it is asked for. */
export function idempotencyKeyOf(ctx: GatewayContext): string | undefined {
  if (ctx.state.idempotencyKey === undefined) ctx.state.idempotencyKey = parseIdempotencyKey(ctx.headers['idempotency-key'] as string | undefined) ?? null;
  return ctx.state.idempotencyKey ?? undefined;
}

/**
 * What a key is scoped to besides the client (docs/api.md "Idempotency": the method and path): the method and the
 * matched route template with its parameters filled in, e.g. "DELETE /v1/submissions/<id>/attachments/<id>".
 */
export function idempotencyScope(ctx: GatewayContext, ids: Record<string, string> = {}): string {
  const template = (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
  if (!template) throw new Error('idempotencyScope outside a matched route');
  const params = ctx.params as Record<string, string> | undefined;
  return `${ctx.method} ${template.replace(/:(\w+)/g, (_, name: string) => ids[name] ?? params?.[name] ?? '')}`;
}

/**
 * Answers the request (under Prefer: wait, once the job settles: see answerOnSettlement); returns the
 * job and whether the request was a replay of an earlier one.
 */
export async function runMutation(ctx: GatewayContext, deps: RouteDeps, m: Mutation): Promise<{ jobId: string; replayed: boolean }> {
  const caller = callerOf(ctx);
  const key = idempotencyKeyOf(ctx);
  const wait = preferredWait(ctx);
  const waitMs = (wait ?? 0) * 1000;

  // Register under the id we propose before the job exists, so its settlement cannot be missed.
  const proposedId = newJobId();
  // At this partner's wait cap: 429 before anything is submitted.
  let waiter: Waiter | undefined = waitMs > 0 ? holdWait(ctx, deps, proposedId, waitMs) : undefined;
  const waitUntil = Date.now() + waitMs;

  let job: JobView;
  let replayed: boolean;
  try {
    const res = await deps.clients.job.SubmitJob(
      {
        jobId: proposedId,
        kind: m.kind,
        caller: { ...ownerOf(ctx), clientId: caller.clientId, principalId: caller.principalId ?? '' },
        payloadJson: JSON.stringify(m.payload),
        ...(key ? { idempotency: { key, scope: idempotencyScope(ctx, m.ids), fingerprint: fingerprint(m.fingerprintOf) } } : {}),
      },
      grpcOptions(ctx, deps.config.grpcTimeoutMs),
    );
    job = jobView(res.job!);
    replayed = res.replayed;
  } catch (err) {
    waiter?.cancel();
    throw err;
  }
  if (replayed) ctx.set('Idempotent-Replayed', 'true');

  if (job.id !== proposedId) {
    // A replay of an earlier job: wait on that one instead, then read it once to close the gap
    // between the job service's answer and this registration.
    waiter?.cancel();
    waiter = undefined;
    const left = waitUntil - Date.now();
    if (!isSettled(job) && left > 0) {
      waiter = holdWait(ctx, deps, job.id, left);
      if (waiter) {
        let now: JobView;
        try {
          now = await readJob(ctx, deps, job.id);
        } catch (err) {
          waiter.cancel();
          throw err;
        }
        if (isSettled(now)) {
          waiter.cancel();
          waiter = undefined;
          job = now;
        }
      }
    }
  }

  const result = { jobId: job.id, replayed };
  // On every answer from here on (200, 202, or the job's error): on a 200 the one place the job's id appears.
  ctx.set('Job-Id', job.id);
  if (isSettled(job)) {
    waiter?.cancel();
    respondSettledMutation(ctx, job);
    return result;
  }
  if (!waiter) respondAccepted(ctx, deps, job.id);
  else answerOnSettlement(ctx, deps, job.id, waiter, (settled) => (settled ? respondSettledMutation(ctx, settled) : respondAccepted(ctx, deps, job.id)));
  return result;
}
