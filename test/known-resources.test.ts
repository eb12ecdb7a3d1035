// Known submissions and quotes (issue 47): the gateway remembers which submissions and quotes are a
// partner's — from the submission.create and quote.create settlements it hears and from its own
// reads — so the ownership check before a quote, a withdraw, an upload, a bind or a quote list makes
// no gRPC call. Observed through the gateway's own metrics: partner_grpc_client_handled_total
// {grpc_method="GetSubmission" | "GetQuote"} (every such call it makes) and
// partner_gateway_known_resource_lookups_total / partner_gateway_known_resources_held.
import { describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { useStack } from './support/use-stack.js';
import { scrape } from './support/metrics.js';
import { addQuotableProduct, DEMO_RISK } from '../scripts/demo/product.mjs';

let PRODUCT: string;
let token: string;
let otherToken: string;

const stack = useStack(async (stack) => {
  await stack.startAll();
  PRODUCT = await addQuotableProduct((...args) => stack.admin(...args), 'Known resources GL');
  const client = await stack.createClient();
  token = await stack.token(client);
  otherToken = await stack.token(await stack.createClient({ tenant: client.tenant, partner: `other-${randomUUID().slice(0, 8)}` }));
});

const WAIT = { prefer: 'wait=20' };
const created = async (): Promise<string> => {
  const r = await stack.api('POST', '/v1/submissions', {
    token,
    headers: WAIT,
    json: { externalRef: `ref-${randomUUID()}`, submissionType: 'application', effectiveDate: '2027-01-01', productId: PRODUCT, applicant: { legalName: `Known ${randomUUID()} LLC` }, risk: DEMO_RISK },
  });
  expect(r.status, r.text).toBe(200);
  return r.body.submissionId as string;
};
const requestQuote = (id: string, t = token, headers: Record<string, string> = WAIT) =>
  stack.api('POST', `/v1/submissions/${id}/quotes`, { token: t, headers, json: { options: [{ limit: '1000000', retention: '10000' }] } });
const listQuotes = (id: string, t = token, base = stack.gatewayUrl) =>
  fetch(`${base}/v1/submissions/${id}/quotes`, { headers: { authorization: `Bearer ${t}` } }).then(async (r) => ({ status: r.status, body: (await r.json()) as { items?: unknown[]; error?: { code: string } } }));

/** A gateway's gRPC ownership reads so far, its checks by outcome, and the resources it holds. */
async function counters(opsUrl = stack.gatewayOpsUrl) {
  const m = await scrape(opsUrl);
  return {
    getSubmission: m.sum('partner_grpc_client_handled_total', { grpc_method: 'GetSubmission' }),
    getQuote: m.sum('partner_grpc_client_handled_total', { grpc_method: 'GetQuote' }),
    hit: m.sum('partner_gateway_known_resource_lookups_total', { outcome: 'hit' }),
    miss: m.sum('partner_gateway_known_resource_lookups_total', { outcome: 'miss' }),
    quoteHit: m.sum('partner_gateway_known_resource_lookups_total', { resource: 'quote', outcome: 'hit' }),
    held: m.sum('partner_gateway_known_resources_held'),
  };
}

describe('the ownership check of a submission or a quote', () => {
  it('asks no service for a submission, then its quote, whose creates this gateway heard settle; the quote and the bind go on as before', async () => {
    const id = await created();
    const before = await counters();
    const list = await listQuotes(id);
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    const q = await requestQuote(id);
    expect(q.status, q.text).toBe(200);
    const quote = q.body.quotes[0];
    expect(quote.status).toBe('open');
    const bind = await stack.api('POST', `/v1/quotes/${quote.quoteId}/bind`, {
      token,
      headers: WAIT,
      json: { offerSha256: createHash('sha256').update(quote.offer).digest('hex') },
    });
    expect(bind.status, bind.text).toBe(200);
    const after = await counters();
    expect(after.getSubmission - before.getSubmission).toBe(0);
    expect(after.getQuote - before.getQuote).toBe(0);
    expect(after.hit - before.hit).toBe(3);
    expect(after.quoteHit - before.quoteHit).toBe(1);
  });

  it('keeps another partner out: its check of the ids is 404 not_found, asked every time, never kept', async () => {
    const id = await created();
    const q = await requestQuote(id);
    const quoteId = q.body.quotes[0].quoteId as string;
    const before = await counters();
    for (let i = 0; i < 2; i++) {
      const foreign = await listQuotes(id, otherToken);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error?.code).toBe('not_found');
      expect((await requestQuote(id, otherToken, {})).status).toBe(404);
      const bind = await stack.api('POST', `/v1/quotes/${quoteId}/bind`, { token: otherToken, json: { offerSha256: '0'.repeat(64) } });
      expect(bind.status).toBe(404);
      expect(bind.body.error.code).toBe('not_found');
    }
    const after = await counters();
    expect(after.getSubmission - before.getSubmission).toBe(4);
    expect(after.getQuote - before.getQuote).toBe(2);
    expect(after.miss - before.miss).toBe(6);
    expect(after.held).toBe(before.held);
  });

  it('an id that names nothing is 404, read through, and nothing is kept', async () => {
    const before = await counters();
    expect((await listQuotes(randomUUID())).status).toBe(404);
    expect((await stack.api('POST', `/v1/quotes/${randomUUID()}/bind`, { token, json: { offerSha256: '0'.repeat(64) } })).status).toBe(404);
    const after = await counters();
    expect(after.getSubmission - before.getSubmission).toBe(1);
    expect(after.getQuote - before.getQuote).toBe(1);
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
    expect(mid.getSubmission - before.getSubmission).toBe(1);
    expect(mid.miss - before.miss).toBe(1);
    expect((await listQuotes(id, token, base)).status).toBe(200);
    const after = await counters(ops);
    expect(after.getSubmission - mid.getSubmission).toBe(0);
    expect(after.hit - mid.hit).toBe(1);
    replica.kill('SIGTERM');
    await replica.exited;
  });
});
