// Builds a webhook dispatcher process on the shared start-up (startProcess): its pool (schema events,
// migrated by the events service), NATS (wake-ups; the relay of its own webhook_endpoint.disabled
// events), the HTTP sender, the claim-and-send loop and its metrics (metrics.ts). Several may run:
// they share the work through PostgreSQL (claims with FOR UPDATE SKIP LOCKED).
import { PLANNER_INDEX_WALKS } from '@partner/shared/db/pg';
import { eventOutbox } from '@partner/shared/nats/event-outbox';
import type { Logger } from '@partner/shared/telemetry/logger';
import { natsNames } from '@partner/shared/nats/client';
import { EVENT_OUTBOX_METRICS, OutboxRelay } from '@partner/shared/nats/outbox-relay';
import { startProcess } from '@partner/shared/process/start';
import { MIGRATIONS_DIR, SCHEMA } from '../schema.js';
import type { DispatcherConfig } from './config.js';
import { Dispatcher } from './dispatcher.js';
import { dispatcherMetrics } from './metrics.js';
import { Sender } from './sender.js';

export interface DispatcherService {
  ports: { ops: number };
  stop(): Promise<void>;
}

/**
 * The dispatcher's pool: the events schema (migrated by the events service), its planner held to
 * index walks (PLANNER_INDEX_WALKS: every statement it runs reads a few rows through an index).
 */
export const DISPATCHER_DB = { schema: SCHEMA, migrationsDir: MIGRATIONS_DIR, planner: PLANNER_INDEX_WALKS };

export async function startDispatcher(config: DispatcherConfig, opts: { logger?: Logger } = {}): Promise<DispatcherService> {
  const names = natsNames(config.natsPrefix);
  const running = await startProcess({
    name: 'dispatcher',
    config,
    logger: opts.logger,
    // Ready once started, like every process (its dependencies' outages show in its metrics).
    db: DISPATCHER_DB,
    migrate: false,
    // NATS only wakes the loop (and carries the relay): without it, deliveries still go out at each poll.
    nats: { connect: 'later' },
    build: async ({ pool, registry, logger, nats }) => {
      const relay = new OutboxRelay(pool, eventOutbox(names, config.eventsStream), {
        intervalMs: config.relayIntervalMs,
        logger,
        gauges: { registry, prefix: EVENT_OUTBOX_METRICS },
      });
      const sender = new Sender({
        timeoutMs: config.timeoutMs,
        rules: { allowLoopback: config.allowLoopbackTargets, allowHttp: config.environment !== 'production', allowedPorts: config.allowedPorts },
        connectionsPerOrigin: config.endpointConcurrency,
      });
      const dispatcher = new Dispatcher(pool, names, sender, config, logger, {
        metrics: dispatcherMetrics(registry, pool),
        disabled: (e) => relay.publishNow(e.outboxId, { msgId: e.msgId, subject: e.subject, body: e.body }),
      });
      nats.onConnect((conn) => {
        relay.attach(conn);
        // Published by the feed writer when a batch queued deliveries, and by ping and recover.
        conn.subscribe(names.webhooksDueSubject, { callback: () => dispatcher.wake() });
        // A wake-up published while the connection was down is lost: look again after each reconnect.
        void (async () => {
          for await (const st of conn.status()) if (st.type === 'reconnect') dispatcher.wake();
        })();
      });
      relay.start();
      dispatcher.start();
      return {
        stop: async () => {
          await dispatcher.stop(config.drainMs);
          await relay.stop();
          await sender.close();
        },
      };
    },
  });
  return { ports: { ops: running.ports.ops! }, stop: running.stop };
}
