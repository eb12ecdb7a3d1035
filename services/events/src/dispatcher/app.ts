// Builds a webhook dispatcher process: its pool (schema events), NATS (wake-ups; the relay of its
// own webhook_endpoint.disabled events), the HTTP sender, the claim-and-send loop and its metrics.
// Several may run: they share the work through PostgreSQL (claims with FOR UPDATE SKIP LOCKED).
import { Counter, Gauge, Histogram } from 'prom-client';
import type { NatsConnection } from 'nats';
import { eventOutbox } from '@partner/shared/events';
import { createLogger, type Logger } from '@partner/shared/logger';
import { metricSourceFailures } from '@partner/shared/metric-sources';
import { connectNats, natsNames } from '@partner/shared/nats';
import { createRegistry, startOpsServer } from '@partner/shared/ops';
import { OutboxRelay } from '@partner/shared/outbox-relay';
import { createPool, registerPoolMetrics } from '@partner/shared/pg';
import { SCHEMA } from '../app.js';
import type { DispatcherConfig } from './config.js';
import { Dispatcher } from './dispatcher.js';
import { Sender } from './sender.js';
import { backlog } from './store.js';

export interface DispatcherService {
  ports: { ops: number };
  stop(): Promise<void>;
}

const OUTCOMES = ['success', 'http_error', 'timeout', 'network_error', 'refused'] as const;
/** Partners named in the per-partner backlog gauge; the rest are summed as "other". */
const TOP_PARTNERS = 10;

export async function startDispatcher(config: DispatcherConfig, opts: { logger?: Logger } = {}): Promise<DispatcherService> {
  const logger = opts.logger ?? createLogger('dispatcher', config.logLevel);
  const registry = createRegistry('dispatcher');
  const names = natsNames(config.natsPrefix);
  const pool = createPool({ url: config.databaseUrl, schema: SCHEMA, max: config.poolMax, applicationName: 'dispatcher', logger, timeouts: config.timeouts });
  registerPoolMetrics(pool, registry, config.poolMax);

  const attempts = new Counter({
    name: 'partner_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (success, http_error, timeout, network_error, refused).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of OUTCOMES) attempts.inc({ outcome }, 0);
  const deliveries = new Counter({
    name: 'partner_webhook_deliveries_total',
    help: 'Webhook deliveries that reached a final state, by status (succeeded, failed).',
    labelNames: ['status'],
    registers: [registry],
  });
  for (const status of ['succeeded', 'failed']) deliveries.inc({ status }, 0);
  const duration = new Histogram({
    name: 'partner_webhook_attempt_duration_seconds',
    help: 'How long a webhook attempt took, from connecting to the end of the answer (or the failure).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const disabled = new Counter({
    name: 'partner_webhook_endpoints_disabled_total',
    help: 'Webhook endpoints disabled by the system, by reason (gone: a 410; failing: no success for the configured time).',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ['gone', 'failing']) disabled.inc({ reason }, 0);
  const looks = new Counter({
    name: 'partner_webhook_dispatcher_looks_total',
    help: 'Looks for due webhook deliveries (claim queries): wake-ups, due times and full claims; idle, it stays flat.',
    registers: [registry],
  });
  const inFlight = new Gauge({ name: 'partner_webhook_in_flight', help: 'Deliveries this dispatcher holds (sending or queued behind an endpoint\'s sends).', registers: [registry] });

  // Backlog gauges, read at scrape time with one shared query; NaN when the database does not answer.
  const sourceFailed = metricSourceFailures(registry, ['partner_webhook_pending_deliveries']);
  let reading: ReturnType<typeof backlog> | undefined;
  const read = () => {
    reading ??= backlog(pool).finally(() => setTimeout(() => (reading = undefined), 100));
    return reading.catch(() => {
      sourceFailed('partner_webhook_pending_deliveries');
      return undefined;
    });
  };
  new Gauge({
    name: 'partner_webhook_pending_deliveries',
    help: 'Webhook deliveries not yet succeeded or failed (all dispatchers; aggregate with max).',
    registers: [registry],
    async collect() {
      this.set((await read())?.pending ?? Number.NaN);
    },
  });
  new Gauge({
    name: 'partner_webhook_oldest_pending_age_seconds',
    help: 'How late the most overdue pending delivery is (due and not claimed); 0 when none is late.',
    registers: [registry],
    async collect() {
      this.set((await read())?.oldestDueAgeS ?? Number.NaN);
    },
  });
  new Gauge({
    name: 'partner_webhook_partner_pending_deliveries',
    help: `Pending webhook deliveries of the ${TOP_PARTNERS} partners with the most; the rest summed as partner="other".`,
    labelNames: ['partner'],
    registers: [registry],
    async collect() {
      const b = await read();
      this.reset();
      if (!b) return this.set({ partner: 'other' }, Number.NaN);
      const top = b.byPartner.slice(0, TOP_PARTNERS);
      for (const p of top) this.set({ partner: p.partner }, p.n);
      this.set({ partner: 'other' }, b.pending - top.reduce((n, p) => n + p.n, 0));
    },
  });

  const relay = new OutboxRelay(pool, eventOutbox(names, config.eventsStream), { intervalMs: config.relayIntervalMs, logger });
  const sender = new Sender({
    timeoutMs: config.timeoutMs,
    rules: { allowLoopback: config.allowLoopbackTargets, allowHttp: config.environment !== 'production' },
    connectionsPerOrigin: config.endpointConcurrency,
  });
  const dispatcher = new Dispatcher(pool, names, sender, config, logger, {
    metrics: {
      attempt: (r) => {
        attempts.inc({ outcome: r.outcome });
        duration.observe(r.durationMs / 1000);
      },
      settled: (s) => {
        if (s.kind === 'succeeded') deliveries.inc({ status: 'succeeded' });
        else if (s.kind === 'failed' || s.kind === 'disabled') deliveries.inc({ status: 'failed' });
        if (s.kind === 'disabled') disabled.inc({ reason: s.reason });
      },
      inFlight: (n) => inFlight.set(n),
      looked: () => looks.inc(),
    },
    disabled: (e) => relay.publishNow(e.outboxId, { msgId: e.msgId, subject: e.subject, body: e.body }),
  });

  // NATS only wakes the loop (and carries the relay): without it, deliveries still go out at each poll.
  let nc: NatsConnection | undefined;
  let stopped = false;
  connectNats({ url: config.natsUrl, name: 'dispatcher', logger })
    .then((conn) => {
      if (stopped) return conn.close();
      nc = conn;
      relay.attach(conn);
      // Published by the feed writer when a batch queued deliveries, and by ping and recover.
      conn.subscribe(names.webhooksDueSubject, { callback: () => dispatcher.wake() });
      // A wake-up published while the connection was down is lost: look again after each reconnect.
      void (async () => {
        for await (const st of conn.status()) if (st.type === 'reconnect') dispatcher.wake();
      })();
    })
    .catch((err: unknown) => logger.error({ err }, 'NATS connection failed'));
  relay.start();
  dispatcher.start();

  const ops = await startOpsServer({
    host: config.host,
    port: config.opsPort,
    registry,
    // It serves no traffic: ready once started (its dependencies' outages show in its metrics).
    checks: {},
  });

  return {
    ports: { ops: ops.port },
    stop: async () => {
      stopped = true;
      ops.setDraining();
      await dispatcher.stop(config.drainMs);
      await relay.stop();
      await sender.close();
      await nc?.drain().catch(() => undefined);
      await pool.end();
      await ops.close();
    },
  };
}
