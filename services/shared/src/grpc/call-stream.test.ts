// The hot calls on open streams (call-stream.ts) against real gRPC servers on loopback, with
// the job service's definition and handlers written here: the same answers, errors, deadlines and
// metadata as unary calls; the fall-back to unary against a server without the stream; and a
// shutdown that answers the calls it runs and is not held up by open streams.
import { afterEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { DomainError } from '../domain/errors.js';
import { createLogger } from '../telemetry/logger.js';
import { createClient, implement, serviceDefs, startGrpcServer, type GrpcServerHandle } from './index.js';
import { STREAMED_METHODS } from './call-stream.js';
import type { Handlers } from './server.js';

type Def = ReturnType<typeof serviceDefs>['job'];
const logger = createLogger('test', 'silent');
const job = (id: string) => ({
  id,
  kind: 'submission.create',
  status: 'JOB_STATUS_ACCEPTED' as const,
  resultJson: '',
  error: null,
  createdAt: '2026-11-24T00:00:00.000Z',
  updatedAt: '2026-11-24T00:00:00.000Z',
  payloadJson: '',
  caller: null,
});

/** What the handlers saw: the calls they ran, with their traceparent and the deadline left. */
const seen: Array<{ method: string; jobId: string; traceparent: unknown; remainingMs: number }> = [];
let release: (() => void) | undefined;

const handlers = {
  SubmitJob: async (req, ctx) => {
    seen.push({ method: 'SubmitJob', jobId: req.jobId, traceparent: ctx.metadata.get('traceparent')[0], remainingMs: ctx.remainingMs() });
    if (req.jobId === 'refused') throw new DomainError('idempotency_key_reused', 'used with another request');
    if (req.jobId === 'slow') await new Promise<void>((resolve) => (release = resolve));
    if (req.jobId === 'hang') await new Promise(() => undefined);
    return { job: job(req.jobId), replayed: req.jobId === 'replay' };
  },
  SettleJob: async (req) => ({ job: job(req.jobId), settledNow: true }),
  GetJob: async (req) => {
    seen.push({ method: 'GetJob', jobId: req.jobId, traceparent: undefined, remainingMs: 0 });
    if (req.jobId === 'hang') await new Promise(() => undefined);
    return { job: job(req.jobId) };
  },
  ListJobs: async () => ({ jobs: [], nextPageToken: '' }),
  ClaimJobs: async (req) => ({ claimed: req.items.map(() => true) }),
  CancelJob: async (req) => ({ job: job(req.jobId), canceledNow: true }),
  StartJob: async (req) => ({ job: job(req.jobId) }),
} as Handlers<Def>;

const submit = (jobId: string) => ({ jobId, kind: 'submission.create', caller: { tenantId: 't', partnerId: 'p', clientId: 'c', principalId: '' }, payloadJson: '{}' });

let server: GrpcServerHandle | undefined;
const closers: Array<() => void> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) c();
  await server?.shutdown(1_000);
  server = undefined;
  seen.length = 0;
});

async function start(): Promise<string> {
  server = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [{ name: 'job', def: serviceDefs().job, impl: implement(serviceDefs().job, handlers, logger) }] });
  return `127.0.0.1:${server.port}`;
}

function client(address: string, callStreams = true) {
  const c = createClient(serviceDefs().job, address, 2_000, { callStreams });
  closers.push(() => c.close());
  return c;
}

describe('the call stream', () => {
  it('carries the submit steps and the hot reads only', () => {
    expect([...STREAMED_METHODS]).toEqual([
      serviceDefs().job.SubmitJob.path,
      serviceDefs().job.SettleJob.path,
      serviceDefs().job.ClaimJobs.path,
      serviceDefs().submission.CreateSubmission.path,
      serviceDefs().job.GetJob.path,
      serviceDefs().policy.ListPolicies.path,
      serviceDefs().policy.GetPolicy.path,
      serviceDefs().events.ListEvents.path,
      serviceDefs().events.GetEvent.path,
    ]);
  });

  it('answers as a unary call would: responses, domain errors, deadlines and the trace context reach the handler', async () => {
    const address = await start();
    for (const callStreams of [true, false]) {
      const c = client(address, callStreams);
      const outs = await Promise.all(['a', 'b', 'replay', 'c'].map((id) => c.SubmitJob(submit(id))));
      expect(outs.map((o) => [o.job?.id, o.replayed])).toEqual([['a', false], ['b', false], ['replay', true], ['c', false]]);
      const err = await c.SubmitJob(submit('refused')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: 'idempotency_key_reused', message: 'used with another request', retryable: false });
      const late = await c.SubmitJob(submit('hang'), { timeoutMs: 150 }).catch((e: unknown) => e);
      expect(late).toMatchObject({ code: 'unavailable', retryable: true });
    }
    const calls = seen.filter((s) => s.method === 'SubmitJob');
    expect(calls).toHaveLength(12);
    // The deadline travels with the message: the handler sees (nearly) the caller's 2 s or 150 ms.
    for (const s of calls) expect(s.remainingMs).toBeGreaterThan(s.jobId === 'hang' ? 50 : 1_500);
    expect(calls.map((s) => s.remainingMs).every((ms) => ms <= 2_000)).toBe(true);
  });

  it('is what the server sees: a raw stream message runs the handler and is answered by id', async () => {
    const address = await start();
    const raw = new grpc.Client(address, grpc.credentials.createInsecure());
    closers.push(() => raw.close());
    const m = serviceDefs().callStream.Calls;
    const stream = raw.makeBidiStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, new grpc.Metadata(), {});
    const answers: Array<{ id: number; code: number; notRun: boolean }> = [];
    const got = new Promise<void>((resolve) =>
      stream.on('data', (f: { id: number; code: number; notRun: boolean }) => {
        answers.push(f);
        if (answers.length === 2) resolve();
      }),
    );
    const req = serviceDefs().job.SubmitJob.requestSerialize(submit('raw'));
    stream.write({ id: 7, method: serviceDefs().job.SubmitJob.path, request: req, timeoutMs: 1_000, metadata: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    stream.write({ id: 8, method: '/partner.job.v1.JobService/NoSuchMethod', request: req, timeoutMs: 1_000, metadata: {} });
    await got;
    stream.end();
    expect(answers.map((a) => [a.id, a.code, a.notRun]).sort()).toEqual([[7, 0, false], [8, grpc.status.UNIMPLEMENTED, true]]);
    expect(seen).toEqual([expect.objectContaining({ jobId: 'raw', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })]);
  });

  it('falls back to unary calls against a server that does not offer the stream', async () => {
    const bare = new grpc.Server();
    bare.addService(serviceDefs().job, implement(serviceDefs().job, handlers, logger));
    const port = await new Promise<number>((resolve, reject) =>
      bare.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    closers.push(() => bare.forceShutdown());
    const c = client(`127.0.0.1:${port}`);
    const outs = await Promise.all(['x', 'y', 'z'].map((id) => c.SubmitJob(submit(id))));
    expect(outs.map((o) => o.job?.id)).toEqual(['x', 'y', 'z']);
    expect((await c.SubmitJob(submit('w'))).job?.id).toBe('w');
    expect(seen.map((s) => s.jobId).sort()).toEqual(['w', 'x', 'y', 'z']);
  });

  it('lets a shutdown answer the call it is running, then end the stream at once (no wait for the forced close)', async () => {
    const address = await start();
    const c = client(address);
    await c.SubmitJob(submit('warm')); // the stream is open
    const slow = c.SubmitJob(submit('slow'));
    await expect.poll(() => seen.some((s) => s.jobId === 'slow')).toBe(true);
    const t0 = Date.now();
    const stopped = server!.shutdown(10_000);
    release!();
    expect((await slow).job?.id).toBe('slow');
    await stopped;
    expect(Date.now() - t0).toBeLessThan(5_000);
    server = undefined;
  });
});
