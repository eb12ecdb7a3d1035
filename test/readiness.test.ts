// Readiness and liveness on a bad day (issue 16): a NATS outage must not take the gateways out of the
// ingress (reads keep working, mutations are accepted into the outbox and settle once NATS is back;
// every process's readiness is "not draining and listening": test/readiness-deps.test.ts),
// a worker whose consume loop dies restarts it instead of staying "ready" while doing nothing, and a
// gauge whose source cannot be read says so instead of repeating its last value.
import { describe, expect, it } from 'vitest';
import { provision, submissionBody } from './support/fixtures.js';
import { EnvReader } from '@partner/shared/config/env';
import { createLogger } from '@partner/shared/telemetry/logger';
import { readJobConfig } from '../services/job/src/config.js';
import { startJob } from '../services/job/src/app.js';
import { readyz, scrape } from './support/metrics.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { until } from './support/poll.js';
import { useStack, useStackWithOwnNats } from './support/use-stack.js';

/**
 * How long NATS stays down: longer than the clients' reconnect wait (500 ms) many times over, and
 * several of the chart's readiness probe periods. Readiness no longer looks at NATS at all (issue 33),
 * so a longer window proves nothing more.
 */
const OUTAGE_MS = 6_000;

describe('NATS stopped for 6 s', () => {
  let token: string;
  const { stack, nats } = useStackWithOwnNats(async (stack) => {
    await stack.startAll({ OUTBOX_RELAY_INTERVAL_MS: '200' });
    token = await provision(stack);
  });

  it('keeps the gateway ready and serving: reads answer, mutations are accepted and settle after NATS returns', { timeout: OUTAGE_MS + 60_000 }, async () => {
    const before = await stack.api('POST', '/v1/submissions', { token, json: submissionBody() });
    expect(before.status).toBe(202);
    const jobId = before.body.id as string;
    expect((await stack.api('GET', `/v1/jobs/${jobId}`, { token, headers: { prefer: 'wait=10' } })).body.status).toBe('succeeded');
    expect((await readyz(stack.gatewayOpsUrl)).status).toBe(200);

    await nats().down();
    const downAt = Date.now();
    const accepted: string[] = [];
    let probes = 0;
    // Throughout the outage: the gateway stays ready, a read of a settled job answers, a new
    // submission is accepted (202, queued in the outbox).
    while (Date.now() - downAt < OUTAGE_MS) {
      const ready = await readyz(stack.gatewayOpsUrl);
      expect(ready.status, JSON.stringify(ready.body)).toBe(200);
      const read = await stack.api('GET', `/v1/jobs/${jobId}`, { token });
      expect(read.status).toBe(200);
      expect(read.body.status).toBe('succeeded');
      const health = await stack.api('GET', '/v1/health', { token });
      expect(health.status).toBe(200);
      const r = await stack.api('POST', '/v1/submissions', { token, json: submissionBody() });
      expect(r.status).toBe(202);
      accepted.push(r.body.id as string);
      probes++;
      // One round of probes a second or so: the loop itself paces on real requests.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    expect(probes).toBeGreaterThanOrEqual(3);
    const queued = await stack.sql<{ n: string }>('SELECT count(*) AS n FROM job.outbox');
    expect(Number(queued[0]!.n)).toBe(accepted.length);

    await nats().up();
    for (const id of accepted) {
      const settled = await stack.api('GET', `/v1/jobs/${id}`, { token, headers: { prefer: 'wait=25' } });
      expect(settled.body.status, id).toBe('succeeded');
    }
    expect(await stack.sql('SELECT 1 FROM job.outbox')).toHaveLength(0);
    expect((await readyz(stack.gatewayOpsUrl)).status).toBe(200);
  });
});

describe('a worker whose consume loop dies', () => {
  let token: string;
  const stack = useStack(async (stack) => {
    await stack.startAll({ WORKER_LIVENESS_AFTER_MS: '60000' });
    token = await provision(stack);
  });

  it('restarts the loop (recreating its consumer) and keeps processing jobs; /livez stays 200', async () => {
    const first = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(), headers: { prefer: 'wait=10' } });
    expect(first.status).toBe(200);
    const { connect } = await import('nats');
    const nc = await connect({ servers: stack.env.NATS_URL });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.consumers.delete(`${stack.prefix}_JOBS`, 'workers');
      await until('the consumer loop restarted', async () => stack.logs.some((l) => l.includes('job consumer restarted')));
      await until('the consumer exists again', async () => (await jsm.consumers.info(`${stack.prefix}_JOBS`, 'workers').catch(() => undefined)) !== undefined);
    } finally {
      await nc.close();
    }
    const after = await stack.api('POST', '/v1/submissions', { token, json: submissionBody(), headers: { prefer: 'wait=15' } });
    expect(after.status, after.text).toBe(200);
    const live = await fetch(`${stack.opsUrls.worker}/livez`);
    expect(live.status).toBe(200);
  });
});

describe('a gauge whose source cannot be read', () => {
  const stack = useStack();

  it('reads NaN instead of its last value while the outbox query fails, and counts the failure (the job and the event outbox)', async () => {
    const proxy = new TcpProxy('127.0.0.1', 5432);
    await proxy.start();
    const job = await startJob(
      readJobConfig(new EnvReader({ ...stack.env, DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/${stack.dbName}` })),
      { logger: createLogger('test', 'silent') },
    );
    const ops = `http://127.0.0.1:${job.ports.ops}`;
    try {
      const up = await scrape(ops);
      expect(up.sum('partner_job_outbox_backlog')).toBe(0);
      expect(up.sum('partner_metric_source_failures_total', { metric: 'partner_job_outbox_backlog' })).toBe(0);
      expect(up.sum('partner_event_outbox_backlog')).toBe(0);
      expect(up.sum('partner_event_outbox_oldest_age_seconds')).toBe(0);
      await proxy.cut();
      // (Scrapes within 100 ms share one read, so the first after the cut may still be the earlier one.)
      await until('the backlog reads NaN', async () => Number.isNaN((await scrape(ops)).sum('partner_job_outbox_backlog')));
      const down = await scrape(ops);
      expect(down.sum('partner_job_outbox_backlog')).toBeNaN();
      expect(down.sum('partner_job_outbox_oldest_age_seconds')).toBeNaN();
      expect(down.sum('partner_metric_source_failures_total', { metric: 'partner_job_outbox_backlog' })).toBeGreaterThanOrEqual(1);
      expect(down.sum('partner_event_outbox_backlog')).toBeNaN();
      expect(down.sum('partner_event_outbox_oldest_age_seconds')).toBeNaN();
      expect(down.sum('partner_metric_source_failures_total', { metric: 'partner_event_outbox_backlog' })).toBeGreaterThanOrEqual(1);
      await proxy.restore();
      // Back: a real count again (the pool reconnects on the next query).
      await until('the outbox is counted again', async () => (await scrape(ops)).sum('partner_job_outbox_backlog') === 0);
      expect((await scrape(ops)).sum('partner_event_outbox_backlog')).toBe(0);
    } finally {
      await proxy.cut();
      await job.stop();
    }
  });
});
