// Adaptive batching on the durable path (issue 20): concurrent SubmitJob, SettleJob and
// CreateSubmission calls commit together, and each still gets exactly the answer it would have got
// alone: idempotency holds inside and across batches, a job settles once, every committed change has
// its own outbox row and event, and a row the database refuses fails only its own call.
// The services run with DB_BATCH_IN_FLIGHT=1, so that calls arriving together queue into batches,
// and without NATS, so that every outbox row stays where the test can read it. Batching stays on in
// CI's run with the off-switches (DB_BATCH_MAX_SIZE=1): this file is about batching.
import { describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { createClient, serviceDefs } from '@partner/shared/grpc';
import { newJobId } from '@partner/shared/domain/ids';
import { useStack } from './support/use-stack.js';
import { PRODUCT } from './support/fixtures.js';

const caller = { tenantId: 't-batch', partnerId: 'p-batch', clientId: 'c-batch', principalId: '' };

const NO_NATS = { NATS_URL: 'nats://127.0.0.1:1' };
const BATCHING = { DB_BATCH_MAX_SIZE: '64', DB_BATCH_IN_FLIGHT: '1' };
const stack = useStack(async (stack) => {
  await stack.startJob({ ...BATCHING, ...NO_NATS });
  await stack.startSubmission({ ...BATCHING, ...NO_NATS });
});

/** The batch sizes a service has reported for a step: how many batches, how many calls, the largest bucket used. */
async function batches(service: 'job' | 'submission', step: string): Promise<{ count: number; calls: number; over1: number }> {
  const text = await (await fetch(`${stack.opsUrls[service]}/metrics`)).text();
  const value = (re: RegExp) => Number(text.match(re)?.[1] ?? NaN);
  const count = value(new RegExp(`partner_db_batch_size_count\\{step="${step}"\\} (\\d+)`));
  const ones = value(new RegExp(`partner_db_batch_size_bucket\\{le="1",step="${step}"\\} (\\d+)`));
  return { count, calls: value(new RegExp(`partner_db_batch_size_sum\\{step="${step}"\\} (\\d+)`)), over1: count - ones };
}

function jobClient() {
  return createClient(serviceDefs().job, stack.env.JOB_GRPC_ADDR!, 10_000);
}

const submitReq = (over: { key?: string; fingerprint?: string } = {}) => ({
  jobId: newJobId(),
  kind: 'submission.create',
  caller,
  payloadJson: JSON.stringify({ n: randomUUID() }),
  ...(over.key ? { idempotency: { key: over.key, scope: 'POST /v1/submissions', fingerprint: over.fingerprint ?? 'f1' } } : {}),
});

describe('SubmitJob', () => {
  it('commits concurrent calls together, each job with its own outbox row, and answers each its own job', async () => {
    const jobs = jobClient();
    try {
      const before = await batches('job', 'SubmitJob');
      const reqs = Array.from({ length: 80 }, (_, i) => submitReq(i % 2 ? { key: randomUUID() } : {}));
      const outs = await Promise.all(reqs.map((r) => jobs.SubmitJob(r)));
      expect(outs.map((o) => [o.job?.id, o.replayed])).toEqual(reqs.map((r) => [r.jobId, false]));
      const after = await batches('job', 'SubmitJob');
      expect(after.calls - before.calls).toBe(80);
      expect(after.over1 - before.over1).toBeGreaterThan(0);
      expect(after.count - before.count).toBeLessThan(80);
      const rows = await stack.sql<{ job_id: string; payload: { n: string }; status: string }>(
        'SELECT job_id, payload, status FROM job.jobs WHERE job_id = ANY($1)',
        [reqs.map((r) => r.jobId)],
      );
      expect(new Map(rows.map((r) => [r.job_id, r.payload]))).toEqual(new Map(reqs.map((r) => [r.jobId, JSON.parse(r.payloadJson)])));
      const keys = await stack.sql<{ job_id: string }>('SELECT job_id FROM job.idempotency_keys WHERE job_id = ANY($1)', [reqs.map((r) => r.jobId)]);
      expect(keys.map((k) => k.job_id).sort()).toEqual(reqs.filter((r) => r.idempotency).map((r) => r.jobId).sort());
      // One outbox row per job, on its kind's subject.
      const outbox = await stack.sql<{ job_id: string; subject: string }>('SELECT job_id, subject FROM job.outbox WHERE job_id = ANY($1)', [reqs.map((r) => r.jobId)]);
      expect(outbox.map((o) => o.job_id).sort()).toEqual(reqs.map((r) => r.jobId).sort());
      expect(new Set(outbox.map((o) => o.subject))).toEqual(new Set([expect.stringMatching(/\.jobs\.submission_create$/)]));
    } finally {
      jobs.close();
    }
  });

  it('keeps idempotency inside and across batches: one job per key, replays for the same request, refusal for another', async () => {
    const jobs = jobClient();
    try {
      const key = randomUUID();
      const same = Array.from({ length: 20 }, () => submitReq({ key }));
      const others = Array.from({ length: 20 }, () => submitReq({ key: randomUUID() }));
      const differing = submitReq({ key, fingerprint: 'another request' });
      const outs = await Promise.all([...same, ...others, differing].map((r) => jobs.SubmitJob(r).then((o) => o, (e: Error & { code?: string }) => e)));
      const sameOuts = outs.slice(0, 20) as Array<{ job: { id: string }; replayed: boolean }>;
      const winner = sameOuts.find((o) => !o.replayed)!.job.id;
      expect(sameOuts.filter((o) => !o.replayed)).toHaveLength(1);
      expect(new Set(sameOuts.map((o) => o.job.id))).toEqual(new Set([winner]));
      expect(outs.slice(20, 40).every((o) => 'replayed' in o && !o.replayed)).toBe(true);
      const last = outs[40] as { code?: string; job?: { id: string } };
      // The differing request either came after the winner (refused) or was the winner itself.
      if (last.job) expect(last.job.id).toBe(winner);
      else expect(last.code).toBe('idempotency_key_reused');
      const n = await stack.sql<{ n: string }>('SELECT count(*) AS n FROM job.jobs WHERE job_id = ANY($1)', [[...same, differing].map((r) => r.jobId)]);
      expect(Number(n[0]!.n)).toBe(1);
    } finally {
      jobs.close();
    }
  });
});

describe('SettleJob', () => {
  it('settles each job once with its own event, whatever else its batch held', async () => {
    const jobs = jobClient();
    try {
      const reqs = Array.from({ length: 40 }, () => submitReq());
      await Promise.all(reqs.map((r) => jobs.SubmitJob(r)));
      const before = await batches('job', 'SettleJob');
      // Every job settled by two racing calls with different outcomes: exactly one of them wins.
      const calls = reqs.flatMap((r, i) => [
        { jobId: r.jobId, resultJson: JSON.stringify({ i }), delivery: 1 },
        { jobId: r.jobId, error: { code: 'internal', message: `lost race ${i}`, retryable: false }, delivery: 2 },
      ]);
      const outs = await Promise.all(calls.map((c) => jobs.SettleJob(c)));
      for (let i = 0; i < reqs.length; i++) {
        const pair = [outs[2 * i]!, outs[2 * i + 1]!];
        expect(pair.filter((o) => o.settledNow)).toHaveLength(1);
        expect(pair[0]!.job?.status).toBe(pair[1]!.job?.status);
      }
      const after = await batches('job', 'SettleJob');
      expect(after.calls - before.calls).toBe(80);
      expect(after.over1 - before.over1).toBeGreaterThan(0);
      const events = await stack.sql<{ body: { event: { type: string; data: { id: string; status: string; result?: { i: number } } } } }>(
        "SELECT body FROM job.event_outbox WHERE body->'event'->'data'->>'id' = ANY($1)",
        [reqs.map((r) => r.jobId)],
      );
      const rows = await stack.sql<{ job_id: string; status: string }>('SELECT job_id, status FROM job.jobs WHERE job_id = ANY($1)', [reqs.map((r) => r.jobId)]);
      const status = new Map(rows.map((r) => [r.job_id, r.status]));
      expect(rows.every((r) => r.status === 'succeeded' || r.status === 'failed')).toBe(true);
      expect(events).toHaveLength(40);
      expect(new Set(events.map((e) => e.body.event.data.id)).size).toBe(40);
      for (const e of events) {
        expect(e.body.event.type).toBe(`job.${status.get(e.body.event.data.id)}`);
        expect(e.body.event.data.status).toBe(status.get(e.body.event.data.id));
      }
    } finally {
      jobs.close();
    }
  });
});

describe('CreateSubmission', () => {
  it('creates concurrent submissions together; a date the database refuses fails only its own call', async () => {
    const subs = createClient(serviceDefs().submission, stack.env.SUBMISSION_GRPC_ADDR!, 10_000);
    try {
      const before = await batches('submission', 'CreateSubmission');
      const reqs = Array.from({ length: 40 }, (_, i) => ({
        jobId: newJobId(),
        owner: { tenantId: caller.tenantId, partnerId: caller.partnerId },
        principalId: '',
        externalRef: `ref-${i}`,
        submissionType: 'application',
        effectiveDate: i === 17 ? '0000-01-01' : '2027-01-01',
        productId: PRODUCT,
        applicant: { legalName: `Applicant ${i}` },
      }));
      // The same job twice: one submission, the second call gets it back.
      const again = { ...reqs[3]!, externalRef: 'ref-3' };
      const outs = await Promise.all([...reqs, again].map((r) => subs.CreateSubmission(r).then((o) => o, (e: Error & { code?: string }) => e)));
      const bad = outs[17] as Error & { code?: string; retryable?: boolean };
      expect(bad).toBeInstanceOf(Error);
      expect(bad.code).toBe('validation_error');
      const good = outs.filter((_, i) => i !== 17) as Array<{ submission: { submissionId: string; externalRef: string; applicant: { legalName: string } } }>;
      expect(good.map((o) => o.submission.externalRef)).toEqual([...reqs.filter((_, i) => i !== 17).map((r) => r.externalRef), 'ref-3']);
      expect(good[3]!.submission.submissionId).toBe(good.at(-1)!.submission.submissionId);
      const after = await batches('submission', 'CreateSubmission');
      expect(after.over1 - before.over1).toBeGreaterThan(0);
      const rows = await stack.sql<{ job_id: string; submission_id: string; external_ref: string }>(
        'SELECT job_id, submission_id, external_ref FROM submission.submissions WHERE job_id = ANY($1)',
        [reqs.map((r) => r.jobId)],
      );
      expect(rows).toHaveLength(39);
      // One submission.created event per submission, each naming its own.
      const events = await stack.sql<{ body: { event: { data: { submissionId: string; externalRef: string } } } }>(
        "SELECT body FROM submission.event_outbox WHERE body->'event'->>'type' = 'submission.created' AND body->>'partnerId' = $1",
        [caller.partnerId],
      );
      const byId = new Map(rows.map((r) => [r.submission_id, r.external_ref]));
      expect(events).toHaveLength(39);
      for (const e of events) expect(byId.get(e.body.event.data.submissionId)).toBe(e.body.event.data.externalRef);
    } finally {
      subs.close();
    }
  });

  it('signs the receipts of a batch before its insert; a batch with a job whose submission exists writes the others\' receipts, the chain gapless', async () => {
    // The receipts a batch signs are written by its insert only when every row is inserted; a
    // redelivered job's row is not, so that batch's new rows get their receipts signed again.
    const owner = { tenantId: caller.tenantId, partnerId: 'p-batch-receipts' };
    const subs = createClient(serviceDefs().submission, stack.env.SUBMISSION_GRPC_ADDR!, 10_000);
    const req = (i: number) => ({
      jobId: newJobId(),
      owner,
      principalId: '',
      externalRef: `rcpt-${i}`,
      submissionType: 'application',
      effectiveDate: '2027-01-01',
      productId: PRODUCT,
      applicant: { legalName: `Receipted ${i}` },
      contentSha256: 'a'.repeat(64),
      receivedAt: new Date().toISOString(),
    });
    const payload = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()) as { seq: number; prev: string | null; submissionId: string; jobId: string };
    try {
      const first = req(0);
      const made = await subs.CreateSubmission(first);
      expect(payload(made.receipt).seq).toBe(1);
      const before = await batches('submission', 'CreateSubmission');
      // The calls arrive together while the first of them is in flight (DB_BATCH_IN_FLIGHT=1): the
      // rest, the redelivery last, queue into a batch.
      const reqs = Array.from({ length: 12 }, (_, i) => req(i + 1));
      const outs = await Promise.all([...reqs, first].map((r) => subs.CreateSubmission(r)));
      expect((await batches('submission', 'CreateSubmission')).over1 - before.over1).toBeGreaterThan(0);
      // The redelivery answers the first receipt, and takes no seq.
      expect(outs.at(-1)!.submission!.submissionId).toBe(made.submission!.submissionId);
      expect(outs.at(-1)!.receipt).toBe(made.receipt);
      // Every new submission has its own receipt, naming it.
      for (const [i, o] of outs.slice(0, -1).entries()) {
        expect(payload(o.receipt)).toMatchObject({ submissionId: o.submission!.submissionId, jobId: reqs[i]!.jobId });
      }
      // The chain as stored: 1..13 without gaps, each prev the hash of the receipt before, the head at its end.
      const chain = await stack.sql<{ seq: string; jws: string }>('SELECT seq, jws FROM submission.receipts WHERE partner_id = $1 ORDER BY seq', [owner.partnerId]);
      expect(chain.map((r) => Number(r.seq))).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
      chain.forEach((r, i) => {
        expect(payload(r.jws).seq).toBe(i + 1);
        expect(payload(r.jws).prev).toBe(i === 0 ? null : createHash('sha256').update(chain[i - 1]!.jws).digest('hex'));
      });
      expect(new Set(chain.map((r) => r.jws))).toEqual(new Set([made.receipt, ...outs.slice(0, -1).map((o) => o.receipt)]));
      const [head] = await stack.sql<{ seq: string; jws_sha256: string }>('SELECT seq, jws_sha256 FROM submission.receipt_heads WHERE partner_id = $1', [owner.partnerId]);
      expect(Number(head!.seq)).toBe(13);
      expect(head!.jws_sha256).toBe(createHash('sha256').update(chain.at(-1)!.jws).digest('hex'));
    } finally {
      subs.close();
    }
  });
});
