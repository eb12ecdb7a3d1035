// Faults injected into the real processes while partners keep working: the database cut off and its
// connections killed, the job and submission services killed, a gateway killed under waiting
// partners, NATS restarted under load, a worker killed mid-job with others running. In every case
// each accepted job settles exactly once and no submission is duplicated; while a dependency is down
// requests fail with 503 `unavailable`, `retryable: true`, and the system recovers without a restart.
import { afterAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { provision, submissionBody } from './support/fixtures.js';
import { Stack, type ApiResponse } from './support/stack.js';
import { useStack, useStackWithOwnNats } from './support/use-stack.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { freePort, until } from './support/poll.js';
import { scrape } from './support/metrics.js';


interface Outcome {
  final: ApiResponse;
  unavailable: ApiResponse[];
}

/** The recommended client pattern: the same Idempotency-Key on every attempt, retrying what is retryable. */
async function submitUntilDone(stack: Stack, token: string, key: string, body: object, base?: string): Promise<Outcome> {
  const unavailable: ApiResponse[] = [];
  for (let attempt = 0; attempt < 60; attempt++) {
    let r: ApiResponse | undefined;
    try {
      r = await stack.api('POST', '/v1/submissions', { token, json: body, headers: { 'idempotency-key': key, prefer: 'wait=10' }, ...(base ? { base } : {}) });
    } catch {
      r = undefined; // the connection dropped: resend
    }
    if (r && r.status === 200) return { final: r, unavailable };
    if (r && !(r.status === 503 && r.body?.error?.retryable === true) && r.status !== 202) return { final: r, unavailable };
    if (r?.status === 503) unavailable.push(r);
    if (r?.status === 202) {
      const settled = await stack.api('GET', new URL(r.body.statusUrl).pathname, { token, headers: { prefer: 'wait=20' }, ...(base ? { base } : {}) }).catch(() => undefined);
      if (settled?.body?.status === 'succeeded') return { final: { ...settled, body: settled.body.result }, unavailable };
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`request ${key} did not succeed in time`);
}

async function expectExactlyOnce(stack: Stack, keys: string[]): Promise<void> {
  const jobs = await stack.sql<{ key: string; n: string }>(
    'SELECT key, count(*) AS n FROM job.idempotency_keys WHERE key = ANY($1) GROUP BY key',
    [keys],
  );
  expect(jobs).toHaveLength(keys.length);
  const perJob = await stack.sql<{ job_id: string; n: string }>(
    `SELECT j.job_id, (SELECT count(*) FROM submission.submissions s WHERE s.job_id = j.job_id) AS n, j.status
       FROM job.jobs j JOIN job.idempotency_keys k ON k.job_id = j.job_id WHERE k.key = ANY($1)`,
    [keys],
  );
  expect(perJob).toHaveLength(keys.length);
  for (const row of perJob) expect({ ...row, n: Number(row.n) }).toMatchObject({ n: 1, status: 'succeeded' });
}

describe('PostgreSQL unreachable, then its connections killed under load', () => {
  let token: string;
  let proxy: TcpProxy;
  const stack = useStack(async (stack) => {
    proxy = new TcpProxy('127.0.0.1', 5432);
    await proxy.start();
    const viaProxy = { DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/${stack.dbName}` };
    await stack.startAuth();
    await stack.startPolicy();
    await stack.startSubmission(viaProxy);
    await stack.startJob({ ...viaProxy, OUTBOX_RELAY_INTERVAL_MS: '200' });
    await stack.startWorker({ WORKER_BACKOFF_MS: '200', WORKER_MAX_DELIVERIES: '50' });
    await stack.startGateway();
    token = await provision(stack);
  });
  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await proxy?.cut();
  });

  it('answers 503 unavailable while the database is cut off and recovers when it returns, without a restart', async () => {
    const key = randomUUID();
    const body = submissionBody(undefined, 'Resilient Mutual');
    await proxy.cut();
    const during = await stack.api('POST', '/v1/submissions', { token, json: body, headers: { 'idempotency-key': key } });
    expect(during.status).toBe(503);
    expect(during.body.error).toMatchObject({ code: 'unavailable', retryable: true });
    expect(during.headers.get('retry-after')).toBeTruthy();
    const read = await stack.api('GET', `/v1/jobs/job_${'a'.repeat(32)}`, { token });
    expect(read.status).toBe(503);
    await proxy.restore();
    const after = await submitUntilDone(stack, token, key, body);
    expect(after.final.status).toBe(200);
    await expectExactlyOnce(stack, [key]);
  });

  it('settles every accepted job exactly once when all its connections are killed mid-load', async () => {
    const keys = Array.from({ length: 40 }, () => randomUUID());
    const load = Promise.all(keys.map((k, i) => new Promise((r) => setTimeout(r, i * 15)).then(() => submitUntilDone(stack, token, k, submissionBody(undefined, 'Resilient Mutual')))));
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      await stack.sql(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
    }
    const outcomes = await load;
    expect(outcomes.every((o) => o.final.status === 200)).toBe(true);
    for (const o of outcomes) for (const u of o.unavailable) expect(u.body.error).toMatchObject({ code: 'unavailable', retryable: true });
    await expectExactlyOnce(stack, keys);
  });
});

describe('the job and submission services killed', () => {
  let token: string;
  let jobPort: number;
  let submissionPort: number;
  const stack = useStack(async (stack) => {
    await stack.startAuth();
    await stack.startPolicy();
    [jobPort, submissionPort] = [await freePort(), await freePort()];
    stack.env.JOB_GRPC_ADDR = `127.0.0.1:${jobPort}`;
    stack.env.SUBMISSION_GRPC_ADDR = `127.0.0.1:${submissionPort}`;
    await stack.spawnService('submission', { SUBMISSION_GRPC_PORT: String(submissionPort), OPS_PORT: '0' });
    await stack.spawnService('job', { JOB_GRPC_PORT: String(jobPort), OPS_PORT: '0', OUTBOX_RELAY_INTERVAL_MS: '200' });
    await stack.startWorker({ WORKER_BACKOFF_MS: '200', WORKER_MAX_DELIVERIES: '50', GRPC_TIMEOUT_MS: '1000' });
    await stack.startGateway({ GRPC_TIMEOUT_MS: '1000' });
    token = await provision(stack);
  });

  it('maps a dead job service to 503 and succeeds on retry once it is back', async () => {
    const warm = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(undefined, 'Resilient Mutual'), headers: { prefer: 'wait=10' } });
    expect(warm.status).toBe(200);
    const jobService = stack.childServices.job!;
    jobService.kill('SIGKILL');
    await jobService.exited;
    const key = randomUUID();
    const body = submissionBody(undefined, 'Resilient Mutual');
    const dead = await stack.api('POST', '/v1/submissions', { token, json: body, headers: { 'idempotency-key': key } });
    expect(dead.status).toBe(503);
    expect(dead.body.error).toMatchObject({ code: 'unavailable', retryable: true });
    await stack.spawnService('job', { JOB_GRPC_PORT: String(jobPort), OPS_PORT: '0', OUTBOX_RELAY_INTERVAL_MS: '200' });
    const retried = await submitUntilDone(stack, token, key, body);
    expect(retried.final.status).toBe(200);
    await expectExactlyOnce(stack, [key]);
  });

  it('finishes a job whose submission service died under it, once, after it returns', async () => {
    const submissionService = stack.childServices.submission!;
    submissionService.kill('SIGKILL');
    await submissionService.exited;
    const key = randomUUID();
    const body = submissionBody(undefined, 'Resilient Mutual');
    const accepted = await stack.api('POST', '/v1/submissions', { token, json: body, headers: { 'idempotency-key': key } });
    expect(accepted.status).toBe(202);
    const read = await stack.api('GET', `/v1/submissions/${randomUUID()}`, { token });
    expect(read.status).toBe(503);
    await stack.spawnService('submission', { SUBMISSION_GRPC_PORT: String(submissionPort), OPS_PORT: '0' });
    const settled = await stack.api('GET', new URL(accepted.body.statusUrl).pathname, { token, headers: { prefer: 'wait=25' } });
    expect(settled.body.status).toBe('succeeded');
    await expectExactlyOnce(stack, [key]);
  });
});

describe('a gateway killed while partners wait', () => {
  let token: string;
  const stack = useStack(async (stack) => {
    await stack.startAll();
    token = await provision(stack);
  });

  it('gives the partner who resends to another gateway with the same key the same job', async () => {
    const doomed = await stack.spawnService('gateway', { PORT: '0', OPS_PORT: '0' });
    const key = randomUUID();
    const body = submissionBody('sandbox:delay=3', 'Resilient Mutual');
    const waiting = stack
      .api('POST', '/v1/submissions', { token, json: body, headers: { 'idempotency-key': key, prefer: 'wait=20' }, base: `http://127.0.0.1:${doomed.ports.http}` })
      .then(
        () => 'answered',
        () => 'dropped',
      );
    // Kill it once the job exists, while the partner is waiting on it.
    await until('the job exists', async () => (await stack.sql('SELECT 1 FROM job.idempotency_keys WHERE key = $1', [key])).length === 1);
    doomed.kill('SIGKILL');
    expect(await waiting).toBe('dropped');
    const resent = await stack.api('POST', '/v1/submissions', { token, json: body, headers: { 'idempotency-key': key, prefer: 'wait=20' } });
    expect(resent.status).toBe(200);
    expect(resent.headers.get('idempotent-replayed')).toBe('true');
    await expectExactlyOnce(stack, [key]);
  });
});

describe('a gateway stopped (SIGTERM) while partners wait', () => {
  let token: string;
  const stack = useStack(async (stack) => {
    await stack.startAll();
    token = await provision(stack);
  });

  it('answers them with the job handle at once instead of dropping them', async () => {
    const gateway = await stack.spawnService('gateway', { PORT: '0', OPS_PORT: '0' });
    const base = `http://127.0.0.1:${gateway.ports.http}`;
    const waiting = stack.api('POST', '/v1/submissions', { token, json: submissionBody('sandbox:delay=10'), headers: { prefer: 'wait=25' }, base });
    await until('the partner is waiting', async () => (await scrape(`http://127.0.0.1:${gateway.ports.ops}`)).sum('partner_gateway_waiting_requests') === 1);
    const stoppedAt = Date.now();
    gateway.kill('SIGTERM');
    const r = await waiting;
    expect(r.status).toBe(202);
    expect(r.body.status).toBe('accepted');
    // At once, not at settlement (10 s): generous room for a loaded machine.
    expect(Date.now() - stoppedAt).toBeLessThan(6000);
    expect(await gateway.exited).toBe(0);
  });
});

describe('NATS restarted under load', () => {
  let token: string;
  const { stack, nats } = useStackWithOwnNats(async (stack) => {
    await stack.startAll({ OUTBOX_RELAY_INTERVAL_MS: '200' });
    token = await provision(stack);
  });

  it('settles every job accepted before, during and after the restart exactly once', async () => {
    const keys = Array.from({ length: 30 }, () => randomUUID());
    const load = Promise.all(keys.map((k, i) => new Promise((r) => setTimeout(r, i * 20)).then(() => submitUntilDone(stack, token, k, submissionBody(undefined, 'Resilient Mutual')))));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await nats().down();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await nats().up();
    const outcomes = await load;
    expect(outcomes.every((o) => o.final.status === 200)).toBe(true);
    await expectExactlyOnce(stack, keys);
  });
});

describe('a worker killed mid-job', () => {
  let token: string;
  const stack = useStack(async (stack) => {
    await stack.startAll({}, { worker: false });
    token = await provision(stack);
  });

  const fast = { WORKER_ACK_WAIT_MS: '1000', WORKER_BACKOFF_MS: '100' };

  it('hands its jobs to the workers still running, each settled once', async () => {
    // The victim takes all six jobs before the survivor starts, so each must be handed over.
    const victim = await stack.spawnService('worker', fast);
    const keys = Array.from({ length: 6 }, () => randomUUID());
    const accepted = await Promise.all(
      keys.map((k) => stack.api('POST', '/v1/submissions', { token, json: submissionBody('sandbox:delay=2', 'Resilient Mutual'), headers: { 'idempotency-key': k } })),
    );
    await until('the victim runs all six', async () => (await stack.sql("SELECT 1 FROM job.jobs WHERE status = 'running'")).length === 6);
    await stack.spawnService('worker', fast);
    victim.kill('SIGKILL');
    await victim.exited;
    for (const a of accepted) {
      const settled = await stack.api('GET', new URL(a.body.statusUrl).pathname, { token, headers: { prefer: 'wait=25' } });
      expect(settled.body.status).toBe('succeeded');
    }
    await expectExactlyOnce(stack, keys);
  });

  it('keeps jobs queued while no worker runs and settles them once one starts', async () => {
    const survivor = stack.liveChildren('worker');
    for (const w of survivor) w.kill('SIGKILL');
    await Promise.all(survivor.map((w) => w.exited));
    const key = randomUUID();
    const accepted = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(undefined, 'Resilient Mutual'), headers: { 'idempotency-key': key, prefer: 'wait=1' } });
    expect(accepted.status).toBe(202);
    await stack.spawnService('worker', fast);
    const settled = await stack.api('GET', new URL(accepted.body.statusUrl).pathname, { token, headers: { prefer: 'wait=25' } });
    expect(settled.body.status).toBe('succeeded');
    await expectExactlyOnce(stack, [key]);
  });
});
