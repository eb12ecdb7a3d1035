// Known submissions (issue 47): the gateway remembers which submissions are a partner's — from the
// submission.create settlements it hears and from its own reads — so the ownership check before a
// quote, a withdraw, an upload or a quote list makes no gRPC call. Observed through the gateway's own
// metrics: partner_grpc_client_handled_total{grpc_method="GetSubmission"} (every call it makes to the
// submission service) and partner_gateway_known_submission_lookups_total / _held.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { scrape } from './support/metrics.js';
import { PRODUCT, submissionBody } from './support/fixtures.js';

let client: ClientCreds;
let token: string;
let otherToken: string;

const stack = useStack(async (stack) => {
  await stack.startAll();
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test General Liability');
  client = await stack.createClient();
  token = await stack.token(client);
  otherToken = await stack.token(await stack.createClient({ tenant: client.tenant, partner: `other-${randomUUID().slice(0, 8)}` }));
});

const created = async (): Promise<string> => {
  const r = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(`ref-${randomUUID()}`, 'Known Ltd'), headers: { prefer: 'wait=20' } });
  expect(r.status, r.text).toBe(200);
  return r.body.submissionId as string;
};
const listQuotes = (id: string, t = token, base = stack.gatewayUrl) =>
  fetch(`${base}/v1/submissions/${id}/quotes`, { headers: { authorization: `Bearer ${t}` } }).then(async (r) => ({ status: r.status, body: (await r.json()) as { items?: unknown[]; error?: { code: string } } }));

/** A gateway's gRPC GetSubmission calls so far, its ownership lookups by outcome, and the submissions it holds. */
async function counters(opsUrl = stack.gatewayOpsUrl): Promise<{ calls: number; hit: number; miss: number; held: number }> {
  const m = await scrape(opsUrl);
  return {
    calls: m.sum('partner_grpc_client_handled_total', { grpc_method: 'GetSubmission' }),
    hit: m.sum('partner_gateway_known_submission_lookups_total', { outcome: 'hit' }),
    miss: m.sum('partner_gateway_known_submission_lookups_total', { outcome: 'miss' }),
    held: m.sum('partner_gateway_known_submissions_held'),
  };
}

describe('the ownership check of a submission', () => {
  it('asks the submission service nothing for a submission whose create this gateway heard settle', async () => {
    const id = await created();
    const before = await counters();
    const list = await listQuotes(id);
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    // The quote job runs as before: the product has no rating plan, so it fails with its own error, not 404.
    const q = await stack.api('POST', `/v1/submissions/${id}/quotes`, { token, json: { options: [{ limit: '1000000', retention: '10000' }] }, headers: { prefer: 'wait=20' } });
    expect(q.status, q.text).toBe(422);
    expect(q.body.error.code).toBe('product_not_rated');
    const after = await counters();
    expect(after.calls - before.calls).toBe(0);
    expect(after.hit - before.hit).toBe(2);
  });

  it("keeps another partner out: its check of the id is 404 not_found, asked every time, never kept", async () => {
    const id = await created();
    const before = await counters();
    for (let i = 0; i < 2; i++) {
      const foreign = await listQuotes(id, otherToken);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error?.code).toBe('not_found');
      const q = await stack.api('POST', `/v1/submissions/${id}/quotes`, { token: otherToken, json: { options: [{ limit: '1000000', retention: '10000' }] } });
      expect(q.status).toBe(404);
    }
    const after = await counters();
    expect(after.calls - before.calls).toBe(4);
    expect(after.miss - before.miss).toBe(4);
    expect(after.held).toBe(before.held);
  });

  it('an id that names no submission is 404, read through, and nothing is kept', async () => {
    const before = await counters();
    const none = await listQuotes(randomUUID());
    expect(none.status).toBe(404);
    const after = await counters();
    expect(after.calls - before.calls).toBe(1);
    expect(after.held).toBe(before.held);
  });

  it('a gateway that did not hear the create asks once, then knows the submission from its own read', async () => {
    const id = await created();
    const replica = await stack.spawnService('gateway', { PORT: '0', OPS_PORT: '0' });
    const base = `http://127.0.0.1:${replica.ports.http}`;
    const ops = `http://127.0.0.1:${replica.ports.ops}`;
    const before = await counters(ops);
    expect((await listQuotes(id, token, base)).status).toBe(200);
    const mid = await counters(ops);
    expect(mid.calls - before.calls).toBe(1);
    expect(mid.miss - before.miss).toBe(1);
    expect((await listQuotes(id, token, base)).status).toBe(200);
    const after = await counters(ops);
    expect(after.calls - mid.calls).toBe(0);
    expect(after.hit - mid.hit).toBe(1);
    replica.kill('SIGTERM');
    await replica.exited;
  });
});
