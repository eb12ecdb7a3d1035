// Readiness = "not draining and listening" (issue 33): a shared dependency going away never empties
// a Service. While PostgreSQL (a private server this file starts, stops and starts again) or NATS (a
// private nats-server) is down, every process stays ready (/readyz 200, gRPC health SERVING, /livez
// 200) and reports the dependency on /dependencies; each call the outage breaks answers gRPC
// UNAVAILABLE with `retry-after` in its trailers, the gateway 503 `unavailable` with Retry-After, the
// token endpoint 503 with Retry-After; and once the dependency is back every service serves again
// within seconds, without a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { createClient, grpcReadiness, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { DomainError } from '@partner/shared/domain/errors';
import { basic, Stack, type ClientCreds } from './support/stack.js';
import { useStackWithOwnNats } from './support/use-stack.js';
import { PrivatePostgres } from './support/private-postgres.js';
import { PRODUCT, submissionBody } from './support/fixtures.js';
import { dependencies, readyz, scrape } from './support/metrics.js';
import { until } from './support/poll.js';

type Clients = ReturnType<typeof grpcClients>;

/** A client per gRPC service of the stack, unary calls only (no call streams): the trailers as sent. */
function grpcClients(stack: Stack) {
  const addr = (name: string) => stack.env[`${name.toUpperCase()}_GRPC_ADDR`]!;
  const opts = { callStreams: false };
  return {
    auth: createClient(serviceDefs().auth, addr('auth'), 3_000, opts),
    policy: createClient(serviceDefs().policy, addr('policy'), 3_000, opts),
    submission: createClient(serviceDefs().submission, addr('submission'), 3_000, opts),
    job: createClient(serviceDefs().job, addr('job'), 3_000, opts),
    events: createClient(serviceDefs().events, addr('events'), 3_000, opts),
  };
}

const GRPC_SERVICES = ['auth', 'policy', 'submission', 'job', 'events'] as const;

/** One call per service that reads its database. */
function reads(c: Clients, owner: { tenantId: string; partnerId: string }): Record<(typeof GRPC_SERVICES)[number], () => Promise<unknown>> {
  return {
    auth: () => c.auth.ListPartners({}),
    policy: () => c.policy.ListProducts({ pageSize: 1 }),
    submission: () => c.submission.ListSubmissions({ owner, pageSize: 1 }),
    job: () => c.job.ListJobs({ tenantId: owner.tenantId, partnerId: owner.partnerId, pageSize: 1 }),
    events: () => c.events.ListEvents({ owner, pageSize: 1 }),
  };
}

/** Every service's health SERVING, asked on a channel of its own (what the kubelet's gRPC probe asks). */
async function expectServing(c: Clients): Promise<void> {
  for (const name of GRPC_SERVICES) await expect(grpcReadiness(c[name], SERVICE_NAMES[name], { cacheMs: 0 })(), name).resolves.toBeUndefined();
}

async function expectAllReady(stack: Stack): Promise<void> {
  for (const [name, url] of Object.entries(stack.opsUrls)) {
    const r = await readyz(url);
    expect(r.status, `${name} ${JSON.stringify(r.body)}`).toBe(200);
    expect((await fetch(`${url}/livez`)).status, name).toBe(200);
  }
}

const randomJobId = () => `job_${randomBytes(16).toString('hex')}`;

describe('PostgreSQL stopped, then started again', () => {
  let server: PrivatePostgres;
  let stack: Stack;
  let creds: ClientCreds;
  let token: string;
  let c: Clients;

  beforeAll(async () => {
    server = await PrivatePostgres.start();
    stack = await Stack.create({ pgAdminUrl: server.url() });
    await stack.startAll({ OUTBOX_RELAY_INTERVAL_MS: '200' });
    await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test product');
    creds = await stack.createClient();
    token = await stack.token(creds);
    c = grpcClients(stack);
  });

  afterAll(async () => {
    for (const client of Object.values(c ?? {})) client.close();
    await server?.up().catch(() => undefined);
    await stack?.stop();
    await server?.destroy();
  });

  it('keeps every process ready, answers each call UNAVAILABLE / 503 with a retry hint, and serves again within seconds', async () => {
    const owner = { tenantId: creds.tenant, partnerId: creds.partnerId };
    const calls = reads(c, owner);
    for (const name of GRPC_SERVICES) await expect(calls[name](), name).resolves.toBeDefined();
    const tokenRequest = () =>
      stack.tokenRequest({
        headers: { authorization: basic(creds.clientId, creds.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: stack.scope }).toString(),
      });
    expect((await tokenRequest()).status).toBe(200);
    expect((await stack.api('GET', `/v1/jobs/${randomJobId()}`, { token })).status).toBe(404);

    await server.down();

    // Each call: UNAVAILABLE, retryable, `retry-after: 1` in the trailers (fromGrpcError reads them).
    for (const name of GRPC_SERVICES) {
      const err = await calls[name]().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, name).toBeInstanceOf(DomainError);
      const e = err as DomainError;
      expect({ name, code: e.code, retryable: e.retryable, retryAfterS: e.retryAfterS }).toEqual({ name, code: 'unavailable', retryable: true, retryAfterS: 1 });
      expect((e.cause as grpc.ServiceError).code, name).toBe(grpc.status.UNAVAILABLE);
      expect((e.cause as grpc.ServiceError).metadata.get('retry-after'), name).toEqual(['1']);
    }
    // The gateway: 503 `unavailable` in the envelope, with Retry-After.
    for (const path of [`/v1/jobs/${randomJobId()}`, '/v1/submissions', '/v1/events']) {
      const r = await stack.api('GET', path, { token });
      expect({ path, status: r.status, code: r.body?.error?.code, retryable: r.body?.error?.retryable }).toEqual({ path, status: 503, code: 'unavailable', retryable: true });
      expect(r.headers.get('retry-after'), path).toBe('1');
    }
    // The token endpoint: 503 (RFC 6749's temporarily_unavailable), Retry-After, never a 500.
    const refused = await tokenRequest();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: string }).error).toBe('temporarily_unavailable');

    // Still ready and SERVING everywhere; the outage is reported, not acted on.
    await expectAllReady(stack);
    await expectServing(c);
    for (const name of [...GRPC_SERVICES, 'worker', 'gateway']) {
      const d = await dependencies(stack.opsUrls[name]!);
      expect(d.status, name).toBe(200);
      if (name !== 'worker' && name !== 'gateway') expect(d.body.dependencies.postgres, name).toMatch(/^failed/);
    }
    const job = await scrape(stack.opsUrls.job!);
    expect(job.sum('partner_event_outbox_backlog')).toBeNaN();
    expect(job.sum('partner_event_outbox_oldest_age_seconds')).toBeNaN();

    await server.up();
    const back = Date.now();
    // Every call succeeds again, on the same processes, within seconds.
    for (const name of GRPC_SERVICES) await until(`${name} serves again`, async () => (await calls[name]()) !== undefined, 10_000);
    await until('the gateway serves again', async () => (await stack.api('GET', `/v1/jobs/${randomJobId()}`, { token })).status === 404, 10_000);
    await until('tokens are issued again', async () => (await tokenRequest()).status === 200, 10_000);
    const recoveredMs = Date.now() - back;
    expect(recoveredMs).toBeLessThan(10_000);
    // A mutation goes all the way through again.
    const done = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(), headers: { prefer: 'wait=15' } });
    expect(done.status, done.text).toBe(200);
    await expectAllReady(stack);
    await until('postgres reported ok', async () => (await dependencies(stack.opsUrls.job!)).body.dependencies.postgres === 'ok', 5_000);
    expect(Number.isNaN((await scrape(stack.opsUrls.job!)).sum('partner_event_outbox_backlog'))).toBe(false);
  });
});

describe('NATS stopped, then started again', () => {
  let creds: ClientCreds;
  let token: string;
  let c: Clients;
  const { stack, nats } = useStackWithOwnNats(async (stack) => {
    await stack.startAll({ OUTBOX_RELAY_INTERVAL_MS: '200' });
    await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test product');
    creds = await stack.createClient();
    token = await stack.token(creds);
    c = grpcClients(stack);
  });
  afterAll(() => {
    for (const client of Object.values(c ?? {})) client.close();
  });

  it('keeps every process ready and serving reads; mutations are accepted and settle once NATS is back', async () => {
    const owner = { tenantId: creds.tenant, partnerId: creds.partnerId };
    const calls = reads(c, owner);
    const first = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(), headers: { prefer: 'wait=10' } });
    expect(first.status, first.text).toBe(200);
    await until('the feed has the first events', async () => (await scrape(stack.opsUrls.events!)).sum('partner_events_writer_pending') === 0);

    await nats().down();

    // Ready and SERVING everywhere, the worker included (its liveness is its consume loop's own).
    await expectAllReady(stack);
    await expectServing(c);
    for (const name of ['worker', 'events', 'gateway', 'job']) {
      await until(`${name} reports NATS down`, async () => (await dependencies(stack.opsUrls[name]!)).body.dependencies.nats?.startsWith('failed'), 10_000);
    }
    await until('/readyz reports it too, still 200', async () => {
      const r = await readyz(stack.opsUrls.worker!);
      return r.status === 200 && r.body.dependencies?.nats?.startsWith('failed');
    });
    // Reads need no NATS: every service answers.
    for (const name of GRPC_SERVICES) await expect(calls[name](), name).resolves.toBeDefined();
    expect((await stack.api('GET', '/v1/events', { token })).status).toBe(200);
    // A mutation is accepted into the outbox.
    const accepted = await stack.api('POST', '/v1/submissions', { token, json: submissionBody() });
    expect(accepted.status, accepted.text).toBe(202);
    await until('the writer backlog reads NaN without NATS', async () => Number.isNaN((await scrape(stack.opsUrls.events!)).sum('partner_events_writer_pending')), 10_000);
    await expectAllReady(stack);

    await nats().up();
    const settled = await stack.api('GET', `/v1/jobs/${accepted.body.id as string}`, { token, headers: { prefer: 'wait=20' } });
    expect(settled.body.status, settled.text).toBe('succeeded');
    await until('the feed caught up', async () => (await scrape(stack.opsUrls.events!)).sum('partner_events_writer_pending') === 0, 15_000);
    await until('the event outboxes are empty', async () => {
      for (const name of ['submission', 'job']) if ((await scrape(stack.opsUrls[name]!)).sum('partner_event_outbox_backlog') !== 0) return false;
      return true;
    }, 15_000);
    await expectAllReady(stack);
  });
});
