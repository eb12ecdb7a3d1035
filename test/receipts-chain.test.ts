// The receipt chain under concurrency and a crash (issue 32): 16 clients of one partner create 50
// submissions each (and an attachment after every tenth), while the submission service, running as
// its own process, is SIGKILLed once and started again. Afterwards the partner's chain from
// GET /v1/receipts is 1..n without a gap, each prev links to the receipt before, every receipt
// verifies, and n is the partner's submissions plus attachments: one receipt per record, none lost
// with a rolled-back transaction, none doubled by a redelivered job.
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { compactVerify, createLocalJWKSet } from 'jose';
import { PRODUCT, submissionBody } from './support/fixtures.js';
import { useStack } from './support/use-stack.js';
import { freePort, until } from './support/poll.js';
import { fileBytes, multipartBytes, upload } from './support/attachments.js';
import type { ApiResponse, ChildService } from './support/stack.js';

const CLIENTS = 16;
const PER_CLIENT = 50;
const KILL_AFTER = 300;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('the receipt chain of one partner under 16 concurrent clients, the submission service killed once', () => {
  const tenant = `tenant-${randomBytes(3).toString('hex')}`;
  const partner = `partner-${randomBytes(3).toString('hex')}`;
  let port: number;
  let tokens: string[];
  const stack = useStack(async (stack) => {
    await stack.startAuth();
    await stack.startPolicy();
    port = await freePort();
    stack.env.SUBMISSION_GRPC_ADDR = `127.0.0.1:${port}`;
    await stack.spawnService('submission', { SUBMISSION_GRPC_PORT: String(port), OPS_PORT: '0' });
    await stack.startJob();
    await stack.startEvents();
    await stack.startWorker({ WORKER_BACKOFF_MS: '200', WORKER_MAX_DELIVERIES: '50', GRPC_TIMEOUT_MS: '2000' });
    await stack.startGateway({ GRPC_TIMEOUT_MS: '2000' });
    await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Chain test product');
    tokens = await Promise.all(
      Array.from({ length: CLIENTS }, async () => stack.token(await stack.createClient({ tenant, partner }))),
    );
  });

  it('is 1..n without gaps, each prev linking, n = submissions + attachments', { timeout: 300_000 }, async () => {
    let done = 0;
    let killed: { exited: Promise<number | null> } | undefined;
    let restart!: () => void;
    const back = new Promise<void>((resolve) => (restart = resolve));
    const crash = async () => {
      const child: ChildService = stack.childServices.submission!;
      child.kill('SIGKILL');
      killed = { exited: child.exited };
      await child.exited;
      await stack.spawnService('submission', { SUBMISSION_GRPC_PORT: String(port), OPS_PORT: '0' });
      restart();
    };
    let crashing: Promise<void> | undefined;
    const progressed = () => {
      done++;
      if (done === KILL_AFTER) crashing = crash();
    };

    /** A POST until it succeeds: a 503 waits for the restart, a 202 for the job's settlement. */
    const submit = async (token: string): Promise<string> => {
      const key = randomUUID();
      const body = submissionBody();
      for (let attempt = 0; attempt < 20; attempt++) {
        const r: ApiResponse | undefined = await stack
          .api('POST', '/v1/submissions', { token, json: body, headers: { 'idempotency-key': key, prefer: 'wait=10' } })
          .catch(() => undefined);
        if (r?.status === 200) return r.body.submissionId as string;
        if (r?.status === 202) {
          for (let poll = 0; poll < 20; poll++) {
            const job = await stack.api('GET', new URL(r.body.statusUrl).pathname, { token, headers: { prefer: 'wait=20' } });
            if (job.body.status === 'succeeded') return job.body.result.submissionId as string;
            if (job.body.status === 'failed') throw new Error(`submission failed: ${JSON.stringify(job.body.error)}`);
          }
        }
        if (!r || r.status === 503) await back;
        else if (r.status !== 202) throw new Error(`unexpected ${r.status}: ${r.text}`);
      }
      throw new Error('the submission did not succeed');
    };
    const attach = async (token: string, submissionId: string): Promise<void> => {
      const key = randomUUID();
      const data = fileBytes('application/pdf', 512);
      for (let attempt = 0; attempt < 20; attempt++) {
        const form = multipartBytes({ fileName: 'schedule.pdf', contentType: 'application/pdf', data }, { documentType: 'other' });
        const r = await upload(stack, token, submissionId, form, { 'idempotency-key': key, prefer: 'wait=10' }).catch(() => undefined);
        if (r?.status === 200) return;
        if (r?.status === 202) {
          const statusUrl = (r.body as { statusUrl: string }).statusUrl;
          for (let poll = 0; poll < 20; poll++) {
            const job = await stack.api('GET', new URL(statusUrl).pathname, { token, headers: { prefer: 'wait=20' } });
            if (job.body.status === 'succeeded') return;
            if (job.body.status === 'failed') throw new Error(`attachment failed: ${JSON.stringify(job.body.error)}`);
          }
        }
        if (!r || r.status === 503) {
          // An upload streams straight to the submission service: after the restart, until the
          // gateway's channel to it has reconnected (gRPC's reconnect backoff), it answers 503 at once.
          await back;
          await until('the gateway reaches the submission service again', async () =>
            (await stack.api('GET', `/v1/submissions/${submissionId}/attachments`, { token }).catch(() => undefined))?.status === 200,
          );
        } else if (r.status !== 202) throw new Error(`unexpected upload ${r.status}`);
      }
      throw new Error('the attachment did not succeed');
    };

    try {
      await Promise.all(
        tokens.map(async (token) => {
          for (let i = 0; i < PER_CLIENT; i++) {
            const id = await submit(token);
            progressed();
            if (i % 10 === 9) await attach(token, id);
          }
        }),
      );
    } finally {
      // Even when a client fails: the restarted service must exist before the stack stops, or it
      // would outlive the test (started after the stop looked for it).
      await crashing;
    }
    expect(killed).toBeDefined();
    expect(await killed!.exited).toBeNull(); // ended by the signal

    // The whole chain, every page.
    const items: { seq: number; kind: string; submissionId: string; jws: string }[] = [];
    let cursor = '';
    do {
      const r = await stack.api('GET', `/v1/receipts?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { token: tokens[0] });
      expect(r.status).toBe(200);
      items.push(...r.body.items);
      cursor = r.body.nextCursor ?? '';
    } while (cursor);

    const [{ submissions, attachments }] = await stack.sql<{ submissions: number; attachments: number }>(
      `SELECT (SELECT count(*)::int FROM submission.submissions WHERE tenant_id = $1 AND partner_id = $2) AS submissions,
              (SELECT count(*)::int FROM submission.attachments WHERE tenant_id = $1 AND partner_id = $2 AND state = 'active') AS attachments`,
      [tenant, partner],
    );
    expect(submissions).toBe(CLIENTS * PER_CLIENT);
    expect(attachments).toBe(CLIENTS * (PER_CLIENT / 10));
    expect(items.length).toBe(submissions + attachments);
    expect(items.map((r) => r.seq)).toEqual(items.map((_, i) => i + 1));
    expect(new Set(items.filter((r) => r.kind === 'submission.received').map((r) => r.submissionId)).size).toBe(submissions);

    const jwks = createLocalJWKSet((await stack.api('GET', '/.well-known/receipt-keys.json')).body);
    for (const [i, item] of items.entries()) {
      const claims = JSON.parse(new TextDecoder().decode((await compactVerify(item.jws, jwks)).payload)) as { seq: number; prev: string | null; partnerId: string };
      expect(claims.seq).toBe(i + 1);
      expect(claims.partnerId).toBe(partner);
      expect(claims.prev).toBe(i === 0 ? null : sha256(items[i - 1]!.jws));
    }
  });
});
