// Observability of the whole system (issue 7), through the real services: after a scripted run of
// requests every service's /metrics shows the expected series and counts; one trace spans gateway,
// job service, worker and submission service for one POST /v1/submissions; request and job log lines
// carry the trace id and never a secret; /readyz stays 200 while NATS or PostgreSQL goes away (and
// reports it) and calls answer UNAVAILABLE meanwhile; a service run as its own process exports its
// spans (pg included) over OTLP when configured.
import { beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { SpanKind } from '@opentelemetry/api';
import { node } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EnvReader } from '@partner/shared/config/env';
import { createLogger } from '@partner/shared/telemetry/logger';
import { createClient, grpcReadiness, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import type { DomainError } from '@partner/shared/domain/errors';
import { inSpan } from '@partner/shared/telemetry/tracing';
import { readWorkerConfig } from '../services/worker/src/config.js';
import { startWorker } from '../services/worker/src/app.js';
import { readGatewayConfig } from '../services/gateway/src/config.js';
import { startGateway } from '../services/gateway/src/app.js';
import { readJobConfig } from '../services/job/src/config.js';
import { startJob } from '../services/job/src/app.js';
import { readPolicyConfig } from '../services/policy/src/config.js';
import { startPolicy } from '../services/policy/src/app.js';
import { basic, ROOT, type ApiResponse, type ClientCreds, PG_ADMIN_URL } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { PrivateNats } from './support/nats-server.js';
import { dependencies, readyz, scrape, type Scrape } from './support/metrics.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { until } from './support/poll.js';
import { withSchema } from '../scripts/lib/processes.mjs';

// Spans of every in-process service land here: registered before any service starts, with the
// AsyncLocalStorage context manager and the W3C propagator (NodeTracerProvider.register()).
const spans = new InMemorySpanExporter();
new node.NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).register();

const PRODUCT = '11111111-2222-4333-8444-777777777777';
const quiet = createLogger('test', 'silent');

let client: ClientCreds;
let token: string;
const run: Record<string, ApiResponse> = {};
let refusedStatus = 0;
/** Trace id of the traced POST /v1/submissions, once the traces tests found it. */
let tracedTraceId: string | undefined;
const partnerTrace = { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') };

const submission = (externalRef = `ref-${randomUUID()}`) => ({
  externalRef,
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: PRODUCT,
  applicant: { legalName: 'Observed Holdings LLC' },
});

const jobStatus = async (id: string) => (await stack.sql<{ status: string }>('SELECT status FROM job.jobs WHERE job_id = $1', [id]))[0]?.status;

const stack = useStack(async (stack) => {
  await stack.startAll({}, { dispatcher: true });
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Observed Liability');
  client = await stack.createClient();

  // The scripted run: one token issued, one refused; two health checks; a submission that succeeds
  // within its wait (the traced one, sent with a partner traceparent the gateway must not adopt); a
  // 400; a job that fails (422); a wait that times out (202, the job settles later); a bad token.
  token = await stack.token(client);
  refusedStatus = (
    await stack.tokenRequest({
      headers: { authorization: basic(client.clientId, 'not-the-secret'), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    })
  ).status;
  run.health1 = await stack.api('GET', '/v1/health', { token });
  run.health2 = await stack.api('GET', '/v1/health', { token });
  spans.reset();
  run.traced = await stack.api('POST', '/v1/submissions', {
    token,
    json: submission(),
    headers: { prefer: 'wait=10', traceparent: `00-${partnerTrace.traceId}-${partnerTrace.spanId}-01` },
  });
  run.invalid = await stack.api('POST', '/v1/submissions', { token, json: { externalRef: 'x' } });
  run.failed = await stack.api('POST', '/v1/submissions', { token, json: submission('sandbox:fail=unknown_product'), headers: { prefer: 'wait=10' } });
  run.timedOut = await stack.api('POST', '/v1/submissions', { token, json: submission('sandbox:delay=2'), headers: { prefer: 'wait=1' } });
  run.badToken = await stack.api('GET', '/v1/health', { token: 'not.a.token' });
  await until('the delayed job to settle', async () => (await jobStatus(run.timedOut!.body.id)) === 'succeeded');
});

describe('the scripted run', () => {
  it('answered as scripted', () => {
    expect(refusedStatus).toBe(401);
    expect([run.health1!.status, run.health2!.status]).toEqual([200, 200]);
    expect(run.traced!.status).toBe(200);
    expect(run.invalid!.status).toBe(400);
    expect(run.failed!.status).toBe(422);
    expect(run.failed!.body.error.code).toBe('unknown_product');
    expect(run.timedOut!.status).toBe(202);
    expect(run.badToken!.status).toBe(401);
  });
});

describe('/metrics', () => {
  let m: Record<string, Scrape>;
  beforeAll(async () => {
    // The worker counts a job after SettleJob answers and acks after that: wait until all three are in.
    await until('the worker to count three jobs', async () => (await scrape(stack.opsUrls.worker!)).sum('partner_worker_jobs_processed_total') === 3);
    m = Object.fromEntries(await Promise.all(Object.entries(stack.opsUrls).map(async ([name, url]) => [name, await scrape(url)] as const)));
  });

  const rpc = (service: string, method: string, code = 'OK') => ({ grpc_service: service, grpc_method: method, grpc_code: code });
  const JOB = 'partner.job.v1.JobService';
  const SUBMISSION = 'partner.submission.v1.SubmissionService';
  const POLICY = 'partner.policy.v1.PolicyService';

  it('gateway: requests by route template, method and status; errors by code; waits; token failures', () => {
    const g = m.gateway!;
    const req = (route: string, method: string, status: string) => g.sum('partner_gateway_http_requests_total', { route, method, status });
    expect(req('/v1/health', 'GET', '200')).toBe(2);
    expect(req('/v1/submissions', 'POST', '200')).toBe(1);
    expect(req('/v1/submissions', 'POST', '400')).toBe(1);
    expect(req('/v1/submissions', 'POST', '422')).toBe(1);
    expect(req('/v1/submissions', 'POST', '202')).toBe(1);
    expect(req('unmatched', 'GET', '401')).toBe(1);
    expect(g.sum('partner_gateway_http_requests_total')).toBe(7);
    expect(g.sum('partner_gateway_http_request_duration_seconds_count', { route: '/v1/submissions', status: '200' })).toBe(1);
    // Label values are bounded: templates, never ids or raw paths.
    expect(g.samples.every((s) => !/job_[0-9a-f]{8}|[0-9a-f]{8}-[0-9a-f]{4}/.test(Object.values(s.labels).join(' ')))).toBe(true);
    expect(g.sum('partner_gateway_http_errors_total', { code: 'validation_error' })).toBe(1);
    expect(g.sum('partner_gateway_http_errors_total', { code: 'unknown_product' })).toBe(1);
    expect(g.sum('partner_gateway_wait_outcomes_total', { outcome: 'settled' })).toBe(2);
    expect(g.sum('partner_gateway_wait_outcomes_total', { outcome: 'timed_out' })).toBe(1);
    expect(g.sum('partner_gateway_waiting_requests')).toBe(0);
    expect(g.sum('partner_gateway_http_requests_in_flight')).toBe(0);
    expect(g.sum('partner_gateway_token_verification_failures_total')).toBe(1);
    expect(g.has('partner_gateway_rate_limited_total')).toBe(true);
    expect(g.types.partner_gateway_http_request_duration_seconds).toBe('histogram');
  });

  it('gRPC client and server calls by service, method and code, on both sides', () => {
    const g = m.gateway!;
    expect(g.sum('partner_grpc_client_handled_total', rpc(JOB, 'SubmitJob'))).toBe(3);
    expect(g.sum('partner_grpc_client_handled_total', rpc(JOB, 'GetJob'))).toBe(1); // the timed-out wait's re-read
    expect(g.sum('partner_grpc_client_handling_seconds_count', rpc(JOB, 'SubmitJob'))).toBe(3);
    const job = m.job!;
    for (const method of ['SubmitJob', 'ClaimJobs', 'SettleJob']) expect(job.sum('partner_grpc_server_handled_total', rpc(JOB, method))).toBe(3);
    expect(job.sum('partner_grpc_server_handled_total', rpc(JOB, 'GetJob'))).toBe(1);
    expect(job.sum('partner_grpc_server_handling_seconds_count', { grpc_method: 'SettleJob' })).toBe(3);
    const w = m.worker!;
    expect(w.sum('partner_grpc_client_handled_total', rpc(JOB, 'ClaimJobs'))).toBe(3);
    expect(w.sum('partner_grpc_client_handled_total', rpc(JOB, 'SettleJob'))).toBe(3);
    // Two submissions for one product: the worker asks the policy service once (it caches products).
    expect(w.sum('partner_grpc_client_handled_total', rpc(POLICY, 'GetProduct'))).toBe(1);
    expect(w.sum('partner_grpc_client_handled_total', rpc(SUBMISSION, 'CreateSubmission'))).toBe(2);
    expect(m.submission!.sum('partner_grpc_server_handled_total', rpc(SUBMISSION, 'CreateSubmission'))).toBe(2);
    expect(m.policy!.sum('partner_grpc_server_handled_total', rpc(POLICY, 'GetProduct'))).toBe(1);
    // No call failed anywhere, and health checks (readiness) are not counted as calls.
    for (const s of Object.values(m)) {
      expect(s.samples.filter((x) => x.name.endsWith('_handled_total') && x.labels.grpc_code !== 'OK')).toEqual([]);
      expect(s.samples.some((x) => x.labels.grpc_service === 'grpc.health.v1.Health')).toBe(false);
    }
  });

  it('jobs: accepted, settled by outcome, settle latency, outbox; worker outcomes, concurrency and the consumer', () => {
    const job = m.job!;
    expect(job.sum('partner_jobs_accepted_total', { kind: 'submission.create' })).toBe(3);
    expect(job.sum('partner_jobs_settled_total', { kind: 'submission.create', outcome: 'succeeded' })).toBe(2);
    expect(job.sum('partner_jobs_settled_total', { kind: 'submission.create', outcome: 'failed' })).toBe(1);
    expect(job.sum('partner_job_settle_latency_seconds_count', { kind: 'submission.create' })).toBe(3);
    expect(job.sum('partner_job_outbox_published_total')).toBeGreaterThanOrEqual(3);
    expect(job.sum('partner_job_outbox_backlog')).toBe(0);
    const w = m.worker!;
    expect(w.sum('partner_worker_jobs_processed_total', { kind: 'submission.create', outcome: 'succeeded' })).toBe(2);
    expect(w.sum('partner_worker_jobs_processed_total', { kind: 'submission.create', outcome: 'failed' })).toBe(1);
    expect(w.sum('partner_worker_concurrency_in_use')).toBe(0);
    expect(w.sum('partner_worker_concurrency_limit')).toBe(64);
    for (const name of ['partner_worker_consumer_pending', 'partner_worker_consumer_ack_pending', 'partner_worker_consumer_redelivered']) {
      expect(w.has(name), name).toBe(true);
    }
    expect(w.sum('partner_worker_consumer_pending')).toBe(0);
    expect(w.sum('partner_worker_consumer_redelivered')).toBe(0);
    expect(m.submission!.sum('partner_submissions_created_total')).toBe(2);
  });

  it('event feed lag: the event outboxes of every relaying process, the feed writer\'s backlog and store delay', async () => {
    // Every process that relays an event outbox exports its backlog and oldest age (0 when empty).
    for (const name of ['policy', 'submission', 'job', 'dispatcher']) {
      expect(m[name]!.types.partner_event_outbox_backlog, name).toBe('gauge');
      expect(m[name]!.types.partner_event_outbox_oldest_age_seconds, name).toBe('gauge');
      expect(m[name]!.has('partner_metric_source_failures_total', { metric: 'partner_event_outbox_backlog' }), name).toBe(true);
    }
    for (const name of ['gateway', 'worker', 'auth', 'events']) expect(m[name]!.has('partner_event_outbox_backlog'), name).toBe(false);
    expect(m.policy!.sum('partner_event_outbox_backlog')).toBe(0);
    expect(m.policy!.sum('partner_event_outbox_oldest_age_seconds')).toBe(0);
    // The run's events (submission.created, job.succeeded/failed) are published and then all stored.
    await until('the event outboxes drained', async () =>
      (await Promise.all(['submission', 'job'].map(async (n) => (await scrape(stack.opsUrls[n]!)).sum('partner_event_outbox_backlog')))).every((v) => v === 0),
    );
    const events = await until('the feed writer caught up', async () => {
      const e = await scrape(stack.opsUrls.events!);
      return e.sum('partner_events_writer_pending') === 0 && e.sum('partner_events_stored_total') >= 5 && e;
    });
    expect(events.types.partner_events_writer_pending).toBe('gauge');
    expect(events.types.partner_events_store_delay_seconds).toBe('histogram');
    // One observation per stored stream message, each no longer than the run itself.
    const observed = events.sum('partner_events_store_delay_seconds_count');
    expect(observed).toBeGreaterThanOrEqual(5);
    expect(observed).toBeLessThanOrEqual(events.sum('partner_events_stored_total'));
    expect(events.sum('partner_events_store_delay_seconds_sum') / observed).toBeLessThan(30);
    expect(events.sum('partner_events_store_delay_seconds_bucket', { le: '+Inf' })).toBe(observed);
  });

  it('jobs: accepted and settled count each job once (a replayed request counts nothing), for the accepted-vs-settled rates', async () => {
    const count = async () => {
      const job = await scrape(stack.opsUrls.job!);
      expect(job.types.partner_jobs_accepted_total).toBe('counter');
      expect(job.types.partner_jobs_settled_total).toBe('counter');
      return { accepted: job.sum('partner_jobs_accepted_total', { kind: 'submission.create' }), settled: job.sum('partner_jobs_settled_total', { kind: 'submission.create' }) };
    };
    const before = await count();
    const body = submission();
    const headers = { 'idempotency-key': `obs-${randomUUID()}`, prefer: 'wait=10' };
    const first = await stack.api('POST', '/v1/submissions', { token, json: body, headers });
    const again = await stack.api('POST', '/v1/submissions', { token, json: body, headers });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.text).toBe(first.text);
    expect(await count()).toEqual({ accepted: before.accepted + 1, settled: before.settled + 1 });
  });

  it('are what docs/operations.md, the alerts and the dashboard name, and all of them are documented', () => {
    const exposed = new Set(Object.values(m).flatMap((s) => Object.keys(s.types)));
    const named = (file: string) => new Set([...readFileSync(`${ROOT}${file}`, 'utf8').matchAll(/\bpartner_[a-z0-9_]+/g)].map((x) => x[0]));
    const family = (n: string) => (exposed.has(n) ? n : n.replace(/_(bucket|count|sum)$/, ''));
    const docs = named('docs/operations.md');
    for (const file of ['docs/operations.md', 'charts/partner-submission/templates/prometheusrule.yaml', 'charts/partner-submission/files/dashboards/partner-overview.json']) {
      for (const n of named(file)) expect(exposed.has(family(n)), `${file} names ${n}`).toBe(true);
    }
    const ours = [...exposed].filter((x) => x.startsWith('partner_'));
    expect(ours.length).toBeGreaterThanOrEqual(33);
    for (const n of ours) expect(docs.has(n), `docs/operations.md lacks ${n}`).toBe(true);
  });

  it('pre-initialises the labelled counters panels and alerts read, with the error codes bounded', () => {
    const g = m.gateway!;
    for (const code of ['unavailable', 'internal', 'rate_limited', 'validation_error', 'other']) {
      expect(g.has('partner_gateway_http_errors_total', { code }), code).toBe(true);
    }
    for (const outcome of ['settled', 'timed_out']) expect(g.has('partner_gateway_wait_outcomes_total', { outcome }), outcome).toBe(true);
    expect(g.sum('partner_gateway_wait_rejected_total')).toBe(0);
    expect(g.sum('partner_gateway_max_waiters')).toBeGreaterThan(0);
    expect(g.sum('partner_gateway_max_waiters_per_partner')).toBe(100);
    expect(g.sum('partner_gateway_wait_partner_cap_rejected_total')).toBe(0);
    expect(g.has('partner_gateway_partners_at_wait_cap')).toBe(true);
    for (const kind of ['submission.create', 'attachment.create', 'attachment.delete']) {
      expect(m.job!.has('partner_jobs_accepted_total', { kind }), kind).toBe(true);
      expect(m.job!.has('partner_jobs_settled_total', { kind, outcome: 'failed' }), kind).toBe(true);
      expect(m.worker!.has('partner_worker_jobs_processed_total', { kind, outcome: 'retried' }), kind).toBe(true);
    }
    expect(m.job!.has('partner_metric_source_failures_total', { metric: 'partner_job_outbox_backlog' })).toBe(true);
    expect(m.job!.sum('partner_job_outbox_oldest_age_seconds')).toBe(0);
  });

  it('auth: tokens issued and refused by reason; pools everywhere; default process metrics', () => {
    expect(m.auth!.sum('partner_auth_tokens_issued_total')).toBe(1);
    expect(m.auth!.sum('partner_auth_tokens_refused_total', { reason: 'invalid_client' })).toBe(1);
    // Every process with a database (services/processes.json `schema`).
    for (const name of withSchema()) {
      const s = m[name]!;
      expect(s.has('partner_db_pool_connections', { state: 'in_use' }), name).toBe(true);
      expect(s.has('partner_db_pool_connections', { state: 'idle' }), name).toBe(true);
      expect(s.sum('partner_db_pool_connections'), name).toBeGreaterThan(0);
      expect(s.has('partner_db_pool_waiting_requests'), name).toBe(true);
      expect(s.sum('partner_db_pool_max_connections'), name).toBe(Number(stack.env.DB_POOL_MAX ?? 10));
    }
    for (const [name, s] of Object.entries(m)) {
      expect(s.has('process_resident_memory_bytes'), name).toBe(true);
      // No `service` label (the Prometheus Operator's target label of that name would overwrite it):
      // partner_process_info{component} says which component a target is.
      expect(s.samples.filter((x) => 'service' in x.labels).map((x) => x.name), name).toEqual([]);
      expect(s.has('partner_process_info', { component: name, node_version: process.versions.node }), name).toBe(true);
      expect(s.has('nodejs_eventloop_lag_p99_seconds'), name).toBe(true);
    }
  });
});

describe('traces', () => {
  const finished = () => spans.getFinishedSpans();
  const gatewaySpan = () =>
    finished().find((s) => s.kind === SpanKind.SERVER && s.name === 'POST /v1/submissions' && s.attributes['http.response.status_code'] === 200);

  it('one trace spans gateway, job service, worker and submission service for one POST /v1/submissions', async () => {
    const root = await until('the gateway span', async () => gatewaySpan());
    tracedTraceId = root.spanContext().traceId;
    const trace = finished().filter((s) => s.spanContext().traceId === root.spanContext().traceId);
    const one = (kind: SpanKind, name: string) => {
      const found = trace.filter((s) => s.kind === kind && s.name === name);
      expect(found.map((s) => s.name), `${SpanKind[kind]} ${name}`).toEqual([name]);
      return found[0]!;
    };
    const p = stack.prefix;
    // gateway → job service
    const submitClient = one(SpanKind.CLIENT, 'partner.job.v1.JobService/SubmitJob');
    const submitServer = one(SpanKind.SERVER, 'partner.job.v1.JobService/SubmitJob');
    expect(submitClient.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(submitServer.parentSpanContext?.spanId).toBe(submitClient.spanContext().spanId);
    // job service → JetStream → worker
    const send = one(SpanKind.PRODUCER, `send ${p}.jobs.submission_create`);
    expect(send.parentSpanContext?.spanId).toBe(submitServer.spanContext().spanId);
    const processJob = one(SpanKind.CONSUMER, `process ${p}.jobs.submission_create`);
    expect(processJob.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(processJob.attributes['partner.job.outcome']).toBe('succeeded');
    // worker → policy, submission, job services (children of the consume span)
    for (const name of ['partner.job.v1.JobService/ClaimJobs', 'partner.policy.v1.PolicyService/GetProduct', 'partner.submission.v1.SubmissionService/CreateSubmission', 'partner.job.v1.JobService/SettleJob']) {
      const c = one(SpanKind.CLIENT, name);
      expect(c.parentSpanContext?.spanId, name).toBe(processJob.spanContext().spanId);
      expect(one(SpanKind.SERVER, name).parentSpanContext?.spanId, name).toBe(c.spanContext().spanId);
    }
    // job service → settlement event → the waiting gateway request
    const settle = one(SpanKind.SERVER, 'partner.job.v1.JobService/SettleJob');
    const settled = one(SpanKind.PRODUCER, `send ${p}.events.job_settled`);
    expect(settled.parentSpanContext?.spanId).toBe(settle.spanContext().spanId);
    expect(one(SpanKind.CONSUMER, `process ${p}.events.job_settled`).parentSpanContext?.spanId).toBe(settled.spanContext().spanId);
    expect(root.events.map((e) => e.name)).toContain('job settled');
    expect(root.attributes['http.route']).toBe('/v1/submissions');
  });

  it("starts a new trace for a partner's traceparent unless TRUST_TRACEPARENT, linking to it", async () => {
    const root = await until('the gateway span', async () => gatewaySpan());
    expect(root.spanContext().traceId).not.toBe(partnerTrace.traceId);
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.links.map((l) => l.context.traceId)).toEqual([partnerTrace.traceId]);

    const trusting = await startGateway(readGatewayConfig(new EnvReader({ ...stack.env, TRUST_TRACEPARENT: 'true' })), { logger: quiet });
    try {
      const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
      const r = await stack.api('GET', '/v1/health', { token, headers: { traceparent }, base: `http://127.0.0.1:${trusting.ports.http}` });
      expect(r.status).toBe(200);
      const [, traceId, spanId] = traceparent.split('-');
      const span = await until('the trusting gateway span', async () =>
        finished().find((s) => s.name === 'GET /v1/health' && s.spanContext().traceId === traceId),
      );
      expect(span.parentSpanContext?.spanId).toBe(spanId);
    } finally {
      await trusting.stop();
    }
  });

  it('never traces health checks: neither /readyz nor the grpc.health calls behind it', async () => {
    spans.reset();
    for (const url of Object.values(stack.opsUrls)) expect((await readyz(url)).status).toBe(200);
    await fetch(`${stack.gatewayOpsUrl}/metrics`);
    // A barrier instead of a sleep: a traced request made after them. Its span ends after anything the
    // health checks could have started (they were answered before it was sent), so once it is
    // exported, every span there will be is there.
    const marker = await stack.api('GET', '/v1/health', { token });
    expect(marker.status).toBe(200);
    await until('the marker request\'s span', async () => finished().some((s) => s.name === 'GET /v1/health'));
    expect(finished().filter((s) => s.spanContext().traceId !== finished().find((m) => m.name === 'GET /v1/health')!.spanContext().traceId).map((s) => s.name)).toEqual([]);
  });
});

describe('logs', () => {
  const lines = () => stack.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

  it('one line per request and per job, with the trace id, duration and outcome', async () => {
    const traceId = tracedTraceId;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const requestId = run.traced!.headers.get('x-request-id');
    const request = lines().filter((l) => l.msg === 'request' && l.requestId === requestId);
    expect(request).toHaveLength(1);
    expect(request[0]).toMatchObject({ route: '/v1/submissions', method: 'POST', status: 200, traceId, partnerId: client.partnerId });
    expect(typeof request[0]!.ms).toBe('number');
    const jobs = lines().filter((l) => l.msg === 'job');
    const traced = jobs.filter((l) => l.traceId === traceId);
    expect(traced).toHaveLength(1);
    expect(traced[0]).toMatchObject({ kind: 'submission.create', outcome: 'succeeded', delivery: 1 });
    expect(typeof traced[0]!.ms).toBe('number');
    expect(jobs.filter((l) => l.jobId === run.failed!.body.jobId)[0]).toMatchObject({ outcome: 'failed', err: 'unknown_product' });
  });

  it('never contain a client secret, a token, an Authorization header or attachment bytes', async () => {
    // An attachment with recognisable bytes, through the gateway, submission service and worker.
    const submissionId = run.traced!.body.submissionId as string;
    const marker = `ATTACHMENT-BYTES-${randomBytes(8).toString('hex')}`;
    const boundary = `b${randomBytes(8).toString('hex')}`;
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\n${marker}\r\n--${boundary}--\r\n`;
    const up = await stack.api('POST', `/v1/submissions/${submissionId}/attachments`, {
      token,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, prefer: 'wait=10' },
      body,
    });
    expect(up.status).toBe(200);
    const all = stack.logs.join('\n');
    const services = new Set(lines().map((l) => l.service));
    for (const s of ['gateway', 'auth', 'job', 'worker', 'submission']) expect(services.has(s), s).toBe(true);
    for (const secret of [client.clientSecret, token, token.split('.')[2]!, basic(client.clientId, client.clientSecret), 'not-the-secret', 'not.a.token', marker]) {
      expect(all.includes(secret), secret.slice(0, 12)).toBe(false);
    }
    expect(all).not.toMatch(/Bearer |Basic [A-Za-z0-9+/=]{8}/);
  });
});

describe('/readyz', () => {
  it('stays 200 on the worker while its NATS is down, reporting it (the gateway and the job service too); /livez stays 200', async () => {
    const nats = await PrivateNats.start();
    // The job service on the private NATS gets its own database: its relay must not publish the
    // stack's outbox to a broker no stack worker reads.
    const db = `${stack.dbName}_nats`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    const env = { ...stack.env, NATS_URL: nats.url };
    const worker = await startWorker(readWorkerConfig(new EnvReader(env)), { logger: quiet });
    const gateway = await startGateway(readGatewayConfig(new EnvReader(env)), { logger: quiet });
    const job = await startJob(readJobConfig(new EnvReader({ ...env, DATABASE_URL: stack.env.DATABASE_URL!.replace(/\/[^/]+$/, `/${db}`) })), { logger: quiet });
    const ops = (p: { ports: { ops: number } }) => `http://127.0.0.1:${p.ports.ops}`;
    try {
      for (const s of [worker, gateway, job]) await until('ready', async () => (await readyz(ops(s))).status === 200);
      await nats.down();
      // Readiness is "not draining and listening": the outage is reported, never acted on.
      const r = await until('NATS reported down', async () => {
        const r = await readyz(ops(worker));
        return r.body.dependencies?.nats?.startsWith('failed') && r;
      });
      expect(r.status).toBe(200);
      const d = await dependencies(ops(worker));
      expect(d.status).toBe(200);
      expect(d.body.status).toBe('degraded');
      expect(Object.entries(d.body.dependencies).filter(([, v]) => v !== 'ok').map(([k]) => k)).toEqual(['nats']);
      expect((await fetch(`${ops(worker)}/livez`)).status).toBe(200);
      for (const s of [gateway, job]) expect((await readyz(ops(s))).status).toBe(200);
      await nats.up();
      await until('NATS reported back', async () => (await dependencies(ops(worker))).body.status === 'ok');
      expect((await readyz(ops(worker))).status).toBe(200);
    } finally {
      await Promise.all([worker.stop(), gateway.stop(), job.stop()]);
      await nats.destroy();
      await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('stays 200 and SERVING while PostgreSQL is unreachable, answering calls UNAVAILABLE, and serves when it is back', async () => {
    const proxy = new TcpProxy('127.0.0.1', 5432);
    await proxy.start();
    const policy = await startPolicy(
      readPolicyConfig(new EnvReader({ ...stack.env, DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/${stack.dbName}` })),
      { logger: quiet },
    );
    const ops = `http://127.0.0.1:${policy.ports.ops}`;
    const client = createClient(serviceDefs().policy, `127.0.0.1:${policy.ports.grpc}`, 3_000, { callStreams: false });
    const serving = grpcReadiness(client, SERVICE_NAMES.policy, { cacheMs: 0 });
    try {
      expect((await readyz(ops)).status).toBe(200);
      await proxy.cut();
      const err = await client.GetProduct({ productId: PRODUCT }).catch((e: unknown) => e as DomainError);
      expect({ code: (err as DomainError).code, retryAfterS: (err as DomainError).retryAfterS }).toEqual({ code: 'unavailable', retryAfterS: 1 });
      expect((await dependencies(ops)).body.dependencies.postgres).toMatch(/^failed/);
      expect((await readyz(ops)).status).toBe(200);
      await serving();
      expect((await scrape(ops)).has('partner_db_pool_connections')).toBe(true);
      await proxy.restore();
      await until('serving again', async () => (await client.GetProduct({ productId: PRODUCT })).product?.productId === PRODUCT);
      expect((await dependencies(ops)).body.dependencies.postgres).toBe('ok');
    } finally {
      client.close();
      await policy.stop();
      await proxy.cut();
    }
  });
});

describe('a service as its own process', () => {
  it('exports its spans over OTLP when configured: continuing the caller, with pg queries inside, health checks left out', async () => {
    const received: ReceivedSpan[] = [];
    const collector = await startCollector(received);
    const child = await stack.spawnService('policy', {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'policy-under-test',
    });
    const policy = createClient(serviceDefs().policy, `127.0.0.1:${child.ports.grpc}`, 5_000);
    try {
      await readyz(`http://127.0.0.1:${child.ports.ops}`);
      const traceId = await inSpan('test caller', {}, async (span) => {
        await policy.GetProduct({ productId: PRODUCT });
        return span.spanContext().traceId;
      });
      const server = await until('the exported server span', async () =>
        received.find((s) => s.name === 'partner.policy.v1.PolicyService/GetProduct' && s.traceId === traceId),
      );
      expect(server.service).toBe('policy-under-test');
      // Named by what the statement does (OpenTelemetry database conventions), not `pg.query:p_<hash>`.
      const query = await until('an exported pg span', async () => received.find((s) => s.traceId === traceId && /^SELECT \w+/.test(s.name)));
      expect(received.filter((s) => s.name.startsWith('pg.query:p_'))).toEqual([]);
      expect(query.parentSpanId).not.toBe('');
      // Only spans with a parent: no root spans from the readiness check's SELECT 1 or the ops listener.
      expect(received.filter((s) => !s.parentSpanId)).toEqual([]);
    } finally {
      policy.close();
      child.kill('SIGTERM');
      await child.exited;
      collector.server.close();
    }
  });
});


interface ReceivedSpan {
  service: string;
  name: string;
  kind: number;
  traceId: string;
  parentSpanId: string;
}

/** A stand-in OTLP/HTTP collector (JSON encoding) collecting the spans it is sent. */
async function startCollector(received: ReceivedSpan[]): Promise<{ url: string; server: ReturnType<typeof createHttpServer> }> {
  type Attr = { key: string; value: { stringValue?: string } };
  type Body = {
    resourceSpans?: { resource?: { attributes?: Attr[] }; scopeSpans?: { spans?: { name: string; kind: number; traceId: string; parentSpanId?: string }[] }[] }[];
  };
  const server = createHttpServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as Body;
      for (const rs of body.resourceSpans ?? []) {
        const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const ss of rs.scopeSpans ?? []) {
          for (const sp of ss.spans ?? []) received.push({ service, name: sp.name, kind: sp.kind, traceId: sp.traceId, parentSpanId: sp.parentSpanId ?? '' });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}
