// The worker SIGKILLed mid-bind (issue 43): 200 binds (two racing binds, one per quote, on each of 100
// submissions) while the worker process is killed with SIGKILL once binds have started settling, and
// a fresh worker finishes the rest from JetStream's redelivery. Afterwards every submission has at
// most one policy (exactly one here: one of its two binds wins), every accepted bind job settled,
// every policy has its declarations document, and the partner's receipt chain is gapless (seq 1..n,
// each prev the hash of the receipt before it), verified offline by the SDK. Real PostgreSQL, NATS,
// gRPC and HTTP; the worker is its own OS process.
import { describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import type { ChildService, ClientCreds } from './support/stack.js';
import { ALL_PERMISSIONS } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { until } from './support/poll.js';
import { PRODUCT } from './support/fixtures.js';
import { receiptHash, verifyChain } from '../sdk/client/src/index.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
// A worker that dies leaves its claimed jobs to JetStream's redelivery after this ack wait.
const WORKER_ENV = { WORKER_ACK_WAIT_MS: '2000', WORKER_BACKOFF_MS: '100' };
let creds: ClientCreds;
let token: string;
let worker: ChildService;

const stack = useStack(async (s) => {
  await s.startAll({ MAX_WAITERS_PER_PARTNER: '2000' }, { worker: false });
  worker = await s.spawnService('worker', WORKER_ENV);
  await s.admin('product', 'add', '--id', PRODUCT, '--name', 'Cyber Liability');
  creds = await s.createClient({ permissions: [...ALL_PERMISSIONS, 'quotes/read', 'quotes/write'] });
  token = await s.token(creds);
});

async function submissionWithQuotes(): Promise<{ submissionId: string; quotes: { quoteId: string; offerSha256: string }[] }> {
  const res = await stack.api('POST', '/v1/submissions', {
    token,
    headers: { prefer: 'wait=30' },
    json: {
      externalRef: `ref-${randomUUID()}`,
      submissionType: 'application',
      effectiveDate: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
      productId: PRODUCT,
      applicant: { legalName: `Kill Test ${randomUUID()} Ltd` },
    },
  });
  expect(res.status, res.text).toBe(200);
  const submissionId = res.body.submissionId as string;
  const quotes = [];
  for (let i = 0; i < 2; i++) {
    const quoteId = randomUUID();
    const offer = `eyJhbGciOiJFUzI1NiJ9.${Buffer.from(quoteId).toString('base64url')}.c2ln`;
    await stack.sql(
      `INSERT INTO policy.quotes (quote_id, tenant_id, partner_id, submission_id, product_id, job_id, option_index, option_limit, option_retention,
         status, premium_amount, premium_currency, rating_version, valid_until, offer, offer_sha256)
       VALUES ($1, $2, $3, $4, $5, $6, $7, '1000000', '10000', 'open', '999.00', 'EUR', 1, now() + interval '30 days', $8, $9)`,
      [quoteId, creds.tenant, creds.partnerId, submissionId, PRODUCT, `job_seed_${submissionId}`, i, offer, sha256(offer)],
    );
    quotes.push({ quoteId, offerSha256: sha256(offer) });
  }
  return { submissionId, quotes };
}

describe('bind: the worker SIGKILLed mid-bind', () => {
  it('200 binds: every submission ends with at most one policy, every bind job settles, the receipt chain stays gapless', async () => {
    const subs: Awaited<ReturnType<typeof submissionWithQuotes>>[] = [];
    for (let i = 0; i < 100; i += 20) subs.push(...(await Promise.all(Array.from({ length: 20 }, submissionWithQuotes))));

    const jobs = await Promise.all(
      subs.flatMap((s) =>
        s.quotes.map(async (q) => {
          const r = await stack.api('POST', `/v1/quotes/${q.quoteId}/bind`, { token, json: { offerSha256: q.offerSha256 } });
          expect(r.status, r.text).toBe(202);
          return r.body.id as string;
        }),
      ),
    );
    expect(jobs).toHaveLength(200);
    // Kill the worker once binds are settling (mid-run), then start a fresh one.
    await until(
      'some binds settled',
      async () => Number((await stack.sql<{ n: string }>(`SELECT count(*) AS n FROM job.jobs WHERE kind = 'quote.bind' AND status IN ('succeeded', 'failed')`))[0]!.n) >= 20,
      60_000,
    );
    worker.kill('SIGKILL');
    await worker.exited;
    const settledAtKill = Number((await stack.sql<{ n: string }>(`SELECT count(*) AS n FROM job.jobs WHERE kind = 'quote.bind' AND status IN ('succeeded', 'failed')`))[0]!.n);
    worker = await stack.spawnService('worker', WORKER_ENV);

    // Every accepted bind job settles.
    const settled = await until(
      'every bind job settled',
      async () => {
        const rows = await stack.sql<{ job_id: string; status: string; error: unknown }>(`SELECT job_id, status, error FROM job.jobs WHERE kind = 'quote.bind'`);
        return rows.length === 200 && rows.every((r) => r.status === 'succeeded' || r.status === 'failed') && rows;
      },
      120_000,
    );
    expect(settledAtKill).toBeLessThan(200); // the kill came mid-run
    const succeeded = settled.filter((r) => r.status === 'succeeded');
    // The losers failed as the contract says (quote_not_open: the other quote won).
    for (const r of settled.filter((x) => x.status === 'failed')) expect(JSON.stringify(r.error)).toContain('quote_not_open');

    // Every submission: at most one policy (exactly one: one of its binds won), bound, with its document.
    const policies = await stack.sql<{ submission_id: string; n: string; docs: string }>(
      `SELECT p.submission_id, count(DISTINCT p.policy_id) AS n, count(d.document_id) AS docs
         FROM policy.policies p LEFT JOIN policy.policy_documents d ON d.policy_id = p.policy_id
        WHERE p.partner_id = $1 AND p.quote_id IS NOT NULL GROUP BY p.submission_id`,
      [creds.partnerId],
    );
    const withPolicy = new Set(policies.map((p) => p.submission_id));
    const without = subs.filter((s) => !withPolicy.has(s.submissionId));
    const why = await stack.sql(
      `SELECT j.job_id, j.status, j.error, j.payload->>'quoteId' AS quote_id, q.status AS quote_status, s.status AS sub_status, s.bind_job_id
         FROM job.jobs j JOIN policy.quotes q ON q.quote_id = (j.payload->>'quoteId')::uuid JOIN submission.submissions s ON s.submission_id = q.submission_id
        WHERE q.submission_id = ANY($1::uuid[])`,
      [without.map((s) => s.submissionId)],
    );
    expect(policies, JSON.stringify(why, null, 1)).toHaveLength(100);
    for (const p of policies) {
      expect(Number(p.n), p.submission_id).toBe(1);
      expect(Number(p.docs), p.submission_id).toBe(1);
    }
    expect(succeeded).toHaveLength(100);
    const statuses = await stack.sql<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM submission.submissions WHERE partner_id = $1 GROUP BY status`, [creds.partnerId]);
    expect(statuses).toEqual([{ status: 'bound', n: '100' }]);

    // The receipt chain: gapless, linked, verified offline; one bind.received and one policy.issued per winner.
    const chain: { seq: number; kind: string; jws: string }[] = [];
    for (let after = 0; ; ) {
      const page = await stack.api('GET', `/v1/receipts?limit=200&afterSeq=${after}`, { token });
      expect(page.status, page.text).toBe(200);
      if (page.body.items.length === 0) break;
      chain.push(...page.body.items);
      after = page.body.items.at(-1).seq;
    }
    expect(chain.map((r) => r.seq)).toEqual(chain.map((_, i) => i + 1));
    const keys = (await stack.api('GET', '/.well-known/receipt-keys.json')).body;
    const claims = await verifyChain(chain, keys);
    for (let i = 1; i < claims.length; i++) expect(claims[i]!.prev).toBe(receiptHash(chain[i - 1]!.jws));
    const kinds = (k: string) => claims.filter((c) => c.kind === k).length;
    expect(kinds('submission.received')).toBe(100);
    expect(kinds('policy.issued')).toBe(100);
    // bind.received: one per winner, and one per loser that reserved before losing (none here: the
    // reservation is only taken by the winner), never two for one job.
    expect(kinds('bind.received')).toBe(100);
    expect(new Set(claims.map((c) => `${c.jobId}:${c.kind}`)).size).toBe(claims.length);
  }, 300_000);
});
