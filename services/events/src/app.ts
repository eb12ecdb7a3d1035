// Builds the events service: the feed writer (events stream → events.events, single writer, stream
// order), the retention sweep, and gRPC EventsService for the gateway's feed reads.
import { implement, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { EVENT_TYPES, FEED_DEFAULT_PAGE_SIZE, isEventId, isEventType } from '@partner/shared/domain/events';
import { natsNames } from '@partner/shared/nats/client';
import { dbError } from '@partner/shared/db/pg';
import { startProcess, type RunningProcess, type StartOptions } from '@partner/shared/process/start';
import type { EventsConfig } from './config.js';
import { loadFeedCursors, type CursorPosition, type Owner } from './cursor.js';
import * as feed from './feed.js';
import { eventsMetrics } from './metrics.js';
import { FeedWriter, storedThrough } from './writer.js';
import { sweepDeliveries, webhookHandlers } from './webhooks/rpc.js';
import { secretMigrationSteps } from './webhooks/secrets.js';
import { createPool, type Pool } from '@partner/shared/db/pg';
import { wallClock } from '@partner/shared/domain/clock';
import { requestLogWriterMetrics } from './request-log/metrics.js';
import { maintainPartitions } from './request-log/partitions.js';
import { requestLogHandlers } from './request-log/rpc.js';
import { RequestLogWriter } from './request-log/writer.js';
import { MIGRATIONS_DIR, SCHEMA } from './schema.js';

export const DEFAULT_PAGE_SIZE = FEED_DEFAULT_PAGE_SIZE;
export const MAX_PAGE_SIZE = 200;

const { toEvent } = feed;

function expired(): never {
  throw new DomainError('cursor_expired', 'this cursor is older than the event retention; reconcile with GET /v1/jobs and GET /v1/submissions, then read the feed from since');
}

function ownerOf(o: { tenantId: string; partnerId: string } | null | undefined): Owner {
  if (!o?.tenantId || !o.partnerId) throw new DomainError('validation_error', 'owner is required');
  return { tenantId: o.tenantId, partnerId: o.partnerId };
}

export function startEvents(config: EventsConfig, opts: StartOptions = {}): Promise<RunningProcess> {
  const names = natsNames(config.natsPrefix);
  return startProcess({
    name: 'events',
    config,
    ...opts,
    db: { schema: SCHEMA, migrationsDir: MIGRATIONS_DIR, before: secretMigrationSteps(config.keyEncryptionKeys) },
    // The feed writer starts once NATS is there; reads are served meanwhile, and /readyz does not wait
    // for it (readiness is "not draining and listening": process/start.ts).
    nats: { connect: 'later' },
    clients: { config },
    build: async ({ pool, registry, logger, nats, every, clients }) => {
      let writer: FeedWriter | undefined;
      const metrics = eventsMetrics(registry, {
        streamLastSeq: async () => {
          const nc = nats.current;
          if (!nc || nc.isClosed()) return undefined;
          return (await (await nc.jetstreamManager({ timeout: 1_500 })).streams.info(names.eventsStream)).state.last_seq;
        },
        storedThrough: () => storedThrough(pool),
        handledThrough: () => writer?.handledThrough ?? 0n,
      });
      const cursors = await loadFeedCursors(pool, config.cursorSecrets);

      nats.onConnect((conn) => {
        // An event for every partner is stored once per partner the auth service knows.
        const partners = async () => (await clients.auth.ListPartners({})).partners.map((p) => ({ tenantId: p.tenantId, partnerId: p.partnerId }));
        writer = new FeedWriter(pool, conn, names, { stream: config.eventsStream, logger, metrics, partners, cursors });
        writer.start();
      });

      // The retention sweep: batches until a batch comes back short, then wait for the next run.
      every({
        name: 'event retention sweep',
        intervalMs: config.sweepIntervalMs,
        run: async (stopping) => {
          for (;;) {
            const n = (await feed.sweepBatch(pool, config.retentionMs, config.sweepBatch)) + (await sweepDeliveries(pool, config.retentionMs, config.sweepBatch));
            if (n > 0) {
              metrics.swept(n);
              logger.info({ removed: n }, 'events past their retention removed');
            }
            if (n < config.sweepBatch || stopping()) return;
          }
        },
      });

      // The request log (src/request-log/): the writer of the gateways' batches, its partition job, its reads.
      const logMetrics = requestLogWriterMetrics(registry, {
        pendingBatches: async () => {
          const nc = nats.current;
          if (!nc || nc.isClosed()) return undefined;
          return (await (await nc.jetstreamManager({ timeout: 1_500 })).consumers.info(names.requestLogStream, names.requestLogConsumer)).num_pending;
        },
      });
      const logStore: Pool = config.requestLog.databaseUrl
        ? createPool({ url: config.requestLog.databaseUrl, schema: SCHEMA, max: 2, applicationName: 'events-request-log', logger, timeouts: config.timeouts })
        : pool;
      let logWriter: RequestLogWriter | undefined;
      nats.onConnect((conn) => {
        logWriter = new RequestLogWriter({
          store: logStore,
          ddl: pool,
          nc: conn,
          names,
          logger,
          metrics: logMetrics,
          maxDeliver: config.requestLog.maxDeliver,
          retryDelayMs: config.requestLog.retryDelayMs,
        });
        logWriter.start();
      });
      const partitionPass = async () => {
        try {
          const r = await maintainPartitions(pool, wallClock, { retentionMs: config.requestLog.retentionMs, aheadDays: config.requestLog.partitionsAheadDays });
          logMetrics.partitionJob(true, wallClock.now().getTime() / 1000, r.partitions, r.dropped.length);
          if (r.dropped.length > 0 || r.created.length > 0) logger.info({ created: r.created, dropped: r.dropped }, 'request-log partitions maintained');
        } catch (err) {
          logMetrics.partitionJob(false, 0);
          throw err;
        }
      };
      // Today's partitions before the first batch, then at every interval.
      await partitionPass().catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'request-log partition job failed; will try again'));
      every({ name: 'request-log partition job', intervalMs: config.requestLog.partitionIntervalMs, run: partitionPass });
      const requestLog = await requestLogHandlers(pool);

      const webhooks = await webhookHandlers(pool, {
        endpointLimit: config.webhookEndpointLimit,
        secretOverlapMs: config.webhookSecretOverlapMs,
        keks: config.keyEncryptionKeys,
        logger,
        notifyDue: () => {
          try {
            nats.current?.publish(names.webhooksDueSubject);
          } catch {
            // The dispatchers poll too: the deliveries go out at their next poll.
          }
        },
      });
      const impl = implement(
        serviceDefs().events,
        {
          ...webhooks,
          ...requestLog,
          ListEvents: async (req) => {
            const owner = ownerOf(req.owner);
            const details: ErrorDetail[] = [];
            const limit = req.pageSize === 0 ? DEFAULT_PAGE_SIZE : req.pageSize;
            if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) details.push({ field: 'limit', issue: `must be an integer from 1 to ${MAX_PAGE_SIZE}` });
            const unknown = req.types.filter((t) => !isEventType(t));
            if (unknown.length > 0) details.push({ field: 'types', issue: `unknown event type ${unknown.join(', ')}; known: ${EVENT_TYPES.join(', ')}` });
            let given: CursorPosition | undefined;
            if (req.pageToken) {
              given = cursors.decode(req.pageToken, owner);
              if (given === undefined) details.push({ field: 'cursor', issue: 'is not a cursor of this feed: pass nextCursor unchanged' });
            }
            const since = req.since && !req.pageToken ? new Date(req.since) : undefined;
            if (since && Number.isNaN(since.getTime())) details.push({ field: 'since', issue: 'must be an RFC 3339 timestamp' });
            if (details.length > 0) throw new DomainError('validation_error', 'invalid query parameters', { details });

            // Positions are the partner's own (partner_seq); a version 1 cursor's global position is
            // mapped onto them once, and the reader continues with version 2.
            let cursor: bigint | undefined;
            if (given?.version === 2) cursor = given.seq;
            else if (given?.version === 1) cursor = (await feed.seqAtPosition(pool, owner, given.position).catch(dbError)) ?? expired();
            const after = cursor ?? (since ? await feed.seqBefore(pool, owner, since).catch(dbError) : 0n);
            const page = await feed.readPage(pool, owner, after, req.types, limit).catch(dbError);
            if (cursor !== undefined && cursor < page.sweptThrough) expired();
            const last = page.rows.at(-1);
            // A full page ends at its last event; a short one has shown everything of this partner up
            // to its head (only this partner's events move it: an idle partner's cursor stays put).
            let next = page.rows.length === limit && last ? BigInt(last.partner_seq) : page.head;
            // Never behind where the reader was, nor behind what the sweep removed (an emptied feed).
            if (next < after) next = after;
            // An empty page keeps the reader's place, with `types` too (docs/events.md: an empty page returns
            // the cursor it was given), even when the filter skipped some of the partner's own events.
            if (page.rows.length === 0 && cursor !== undefined) next = cursor;
            if (next < page.sweptThrough) next = page.sweptThrough;
            // The cursor it was given, unchanged, when the reader did not move (even one sealed with a
            // key since rotated out of first place).
            const nextPageToken = given?.version === 2 && next === given.seq ? req.pageToken : cursors.encode(next, owner);
            return { events: page.rows.map(toEvent), nextPageToken };
          },
          GetEvent: async (req) => {
            const owner = ownerOf(req.owner);
            const row = isEventId(req.eventId) ? await feed.getEvent(pool, owner, req.eventId).catch(dbError) : undefined;
            if (!row) throw notFound('event');
            return { event: toEvent(row) };
          },
        },
        logger,
        { registry },
      );

      return {
        grpc: [{ name: SERVICE_NAMES.events, def: serviceDefs().events, impl }],
        stop: async () => {
          await writer?.stop();
          await logWriter?.stop();
          if (logStore !== pool) await logStore.end();
        },
      };
    },
  });
}
