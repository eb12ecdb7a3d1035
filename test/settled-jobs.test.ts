// Settled jobs read from memory (issue 47): the gateway keeps the settled jobs it has seen — from the
// settlement events it hears and from its own reads — bounded by SETTLED_JOBS_CACHE_MAX, keyed by
// partner and job, so a poll of a settled job makes no gRPC call. Observed through the gateway's own
// metrics: partner_grpc_client_handled_total{grpc_method="GetJob"} (every call it makes to the job
// service) and partner_gateway_settled_job_lookups_total / partner_gateway_settled_jobs_held.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { scrape } from './support/metrics.js';
import { PRODUCT, submissionBody } from './support/fixtures.js';

const MAX = 5;
let client: ClientCreds;
let token: string;
let otherToken: string;

const stack = useStack(async (stack) => {
  await stack.startAll({ SETTLED_JOBS_CACHE_MAX: String(MAX), MAX_WAITERS_PER_PARTNER: '1000' });
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test General Liability');
  client = await stack.createClient();
  token = await stack.token(client);
  otherToken = await stack.token(await stack.createClient({ tenant: client.tenant, partner: `other-${randomUUID().slice(0, 8)}` }));
});

const submit = (externalRef: string, headers: Record<string, string> = {}) =>
  stack.api('POST', '/v1/submissions', { token, json: submissionBody(externalRef, 'Cached Ltd'), headers });
const getJob = (id: string, t = token, headers: Record<string, string> = {}) => stack.api('GET', `/v1/jobs/${id}`, { token: t, headers });

/** The gateway's gRPC GetJob calls so far, its lookups by outcome, and the settled jobs it holds. */
async function counters(): Promise<{ getJob: number; hit: number; miss: number; held: number }> {
  const m = await scrape(stack.gatewayOpsUrl);
  return {
    getJob: m.sum('partner_grpc_client_handled_total', { grpc_method: 'GetJob' }),
    hit: m.sum('partner_gateway_settled_job_lookups_total', { outcome: 'hit' }),
    miss: m.sum('partner_gateway_settled_job_lookups_total', { outcome: 'miss' }),
    held: m.sum('partner_gateway_settled_jobs_held'),
  };
}

describe('GET /v1/jobs/{id} of a settled job', () => {
  it('is answered from memory, with no gRPC call, once the gateway has heard the settlement', async () => {
    const done = await submit(`ref-${randomUUID()}`, { prefer: 'wait=20' });
    expect(done.status).toBe(200);
    const id = done.headers.get('job-id')!;
    const before = await counters();
    const polls = await Promise.all(Array.from({ length: 5 }, () => getJob(id)));
    const after = await counters();
    for (const p of polls) {
      expect(p.status).toBe(200);
      expect(p.body).toMatchObject({ id, kind: 'submission.create', status: 'succeeded', result: { submissionId: done.body.submissionId } });
    }
    expect(after.getJob - before.getJob).toBe(0);
    expect(after.hit - before.hit).toBe(5);
    expect(polls[0]!.body).toEqual(polls[4]!.body);
  });

  it('keeps another partner out: its poll of the job id is 404, read through the job service', async () => {
    const done = await submit(`ref-${randomUUID()}`, { prefer: 'wait=20' });
    const id = done.headers.get('job-id')!;
    expect((await getJob(id)).status).toBe(200);
    const before = await counters();
    const foreign = await getJob(id, otherToken);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    const after = await counters();
    expect(after.getJob - before.getJob).toBe(1);
    expect(after.miss - before.miss).toBe(1);
  });

  it('reads an unsettled job through on every poll, and serves it settled once it is (never the stale processing)', async () => {
    const accepted = await submit('sandbox:delay=2');
    expect(accepted.status).toBe(202);
    const id = accepted.body.id as string;
    const before = await counters();
    const first = await getJob(id);
    const second = await getJob(id);
    expect(first.body.status).toBe('processing');
    expect(second.body.status).toBe('processing');
    expect((await counters()).getJob - before.getJob).toBe(2);
    const settled = await getJob(id, token, { prefer: 'wait=20' });
    expect(settled.body.status).toBe('succeeded');
    const mid = await counters();
    const again = await getJob(id);
    expect(again.body).toEqual(settled.body);
    expect((await counters()).getJob - mid.getJob).toBe(0);
  });

  it('a cancelled job is settled: served from memory after the cancel', async () => {
    const accepted = await submit('sandbox:hold=30');
    const id = accepted.body.id as string;
    const canceled = await stack.api('POST', `/v1/jobs/${id}/cancel`, { token });
    expect(canceled.status).toBe(200);
    const before = await counters();
    const read = await getJob(id);
    expect(read.body).toEqual(canceled.body);
    expect((await counters()).getJob - before.getJob).toBe(0);
  });

  it('an unknown job id is read through (404), and nothing is kept for it', async () => {
    const before = await counters();
    const unknown = await getJob(`job_${'0'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    const after = await counters();
    expect(after.getJob - before.getJob).toBe(1);
    expect(after.held).toBe(before.held);
  });

  it(`holds at most SETTLED_JOBS_CACHE_MAX (${MAX}) settled jobs: the oldest is read through again, correctly`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < MAX + 3; i++) {
      const r = await submit(`ref-${randomUUID()}`, { prefer: 'wait=20' });
      expect(r.status).toBe(200);
      ids.push(r.headers.get('job-id')!);
    }
    const held = await counters();
    expect(held.held).toBe(MAX);
    // The newest are in memory; the first was let go and is read through (and then kept again).
    const newest = await getJob(ids.at(-1)!);
    expect(newest.body.status).toBe('succeeded');
    const mid = await counters();
    expect(mid.getJob - held.getJob).toBe(0);
    const oldest = await getJob(ids[0]!);
    expect(oldest.status).toBe(200);
    expect(oldest.body).toMatchObject({ id: ids[0], status: 'succeeded' });
    const after = await counters();
    expect(after.getJob - mid.getJob).toBe(1);
    expect(after.held).toBe(MAX);
  });
});
