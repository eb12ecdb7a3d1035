// Builds the policy service: the product catalogue and partners' policies over gRPC.
import { implementWithStreaming, serverStreaming, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { notFound } from '@partner/shared/domain/errors';
import { isUuid } from '@partner/shared/domain/ids';
import { dbError, withTx } from '@partner/shared/db/pg';
import { startProcess, type RunningProcess, type StartOptions } from '@partner/shared/process/start';
import type { PolicyConfig } from './config.js';
import { getProduct, listProducts, parseListProducts, productToProto } from './products.js';
import { natsNames } from '@partner/shared/nats/client';
import { eventOutbox } from '@partner/shared/nats/event-outbox';
import { EVENT_OUTBOX_METRICS, OutboxRelay } from '@partner/shared/nats/outbox-relay';
import { loadCursorCodec } from '@partner/shared/db/cursor-keys';
import { getPolicy, listPolicies, ownerOf, parseListRequest, toProto } from './policies.js';
import { Counter, Gauge } from 'prom-client';
import { wallClock } from '@partner/shared/domain/clock';
import type { RecordedEvent } from '@partner/shared/nats/event-outbox';
import { bindQuote, checkBind, eventsOf } from './issue/bind.js';
import { documentToProto, getDocument, listDocuments, readChunk, CHUNK_BYTES } from './issue/documents.js';
import { sweepTransitions } from './issue/sweeper.js';
import { getQuote } from './quotes/repository.js';
import { clockOfRecord, clockToProto, createClock, deleteClock, getClock, listClocks, parseClockList } from './clocks/test-clocks.js';
import { advanceStep } from './clocks/advance.js';
import type { ReadPolicyDocumentContentRequest__Output } from '@partner/shared/generated/partner/policy/v1/ReadPolicyDocumentContentRequest';
import type { ReadPolicyDocumentContentResponse } from '@partner/shared/generated/partner/policy/v1/ReadPolicyDocumentContentResponse';
import { quoteService } from './quotes/service.js';
import { releaseSubmissionQuotes } from './quotes/repository.js';
import { referralMetrics } from './quotes/metrics.js';
import { newUuid } from '@partner/shared/domain/ids';
import { CLOCK_CURSOR_CONTEXT, CURSOR_CONTEXT, MIGRATIONS_DIR, PRODUCT_CURSOR_CONTEXT, QUOTE_CURSOR_CONTEXT, SCHEMA } from './schema.js';

export function startPolicy(config: PolicyConfig, opts: StartOptions = {}): Promise<RunningProcess> {
  return startProcess({
    name: 'policy',
    config,
    ...opts,
    db: { schema: SCHEMA, migrationsDir: MIGRATIONS_DIR },
    nats: { connect: 'later' },
    build: async ({ pool, registry, logger, nats, every }) => {
      const codec = await loadCursorCodec(pool, config.cursorSecrets, CURSOR_CONTEXT).catch(dbError);
      const productCodec = await loadCursorCodec(pool, config.cursorSecrets, PRODUCT_CURSOR_CONTEXT).catch(dbError);
      const clockCodec = await loadCursorCodec(pool, config.cursorSecrets, CLOCK_CURSOR_CONTEXT).catch(dbError);
      // product.requirements_changed is recorded by the admin command (policy.event_outbox, in the
      // transaction of the change); this relay publishes it to the events stream. NATS may come later.
      const events = new OutboxRelay(pool, eventOutbox(natsNames(config.natsPrefix), config.eventsStream), {
        intervalMs: config.relayIntervalMs,
        logger,
        gauges: { registry, prefix: EVENT_OUTBOX_METRICS },
      });
      events.start();
      nats.onConnect((conn) => events.attach(conn));
      const names = natsNames(config.natsPrefix);
      const publish = (recorded: RecordedEvent[]) => {
        for (const e of recorded) events.publishNow(e.outboxId, e);
      };
      // The clock a quote's bind reads (issue 44): its submission's test clock (the quote copies its id),
      // else the wall clock; clock_advancing while that clock advances.
      const clockOfQuote = async (owner: { tenantId: string; partnerId: string }, quoteId: string) => {
        const q = await getQuote(pool, owner, quoteId);
        const clock = q?.test_clock_id ? await clockOfRecord(pool, q.test_clock_id) : wallClock;
        return () => clock;
      };
      const moved = new Counter({
        name: 'partner_policy_transitions_total',
        help: 'Records the wall-clock sweeper moved, by transition (policy_activated, policy_expired, quote_expired).',
        labelNames: ['transition'],
        registers: [registry],
      });
      const lastSweep = new Gauge({
        name: 'partner_policy_sweep_last_success_seconds',
        help: 'Unix time the wall-clock transition sweeper last completed a pass (alert when it falls behind).',
        registers: [registry],
      });
      every({
        name: 'policy transition sweep',
        intervalMs: config.sweepIntervalMs,
        run: async (stopping) => {
          const r = await sweepTransitions(pool, names, wallClock, { stopping, onEvents: publish });
          moved.inc({ transition: 'policy_activated' }, r.activated);
          moved.inc({ transition: 'policy_expired' }, r.expired);
          moved.inc({ transition: 'quote_expired' }, r.quotesExpired);
          lastSweep.setToCurrentTime();
          if (r.activated + r.expired + r.quotesExpired > 0) logger.info(r, 'policy transition sweep');
        },
      });
      const bindFailure = (err: unknown): never => {
        publish(eventsOf(err));
        return dbError(err);
      };
      referralMetrics(registry, pool);
      const quoteCodec = await loadCursorCodec(pool, config.cursorSecrets, QUOTE_CURSOR_CONTEXT).catch(dbError);
      const quotes = quoteService({
        pool,
        names: natsNames(config.natsPrefix),
        codec: quoteCodec,
        published: (recorded) => {
          for (const e of recorded) events.publishNow(e.outboxId, e);
        },
        newId: newUuid,
      });
      return {
        grpc: [
          {
            name: SERVICE_NAMES.policy,
            def: serviceDefs().policy,
            impl: implementWithStreaming(
              serviceDefs().policy,
              {
                ...quotes,
                GetProduct: async (req) => {
                  const row = isUuid(req.productId) ? await getProduct(pool, req.productId).catch(dbError) : undefined;
                  if (!row) throw notFound('product');
                  return { product: productToProto(row) };
                },
                ListProducts: async (req) => {
                  const args = parseListProducts(req, productCodec);
                  const page = await listProducts(pool, args, productCodec).catch(dbError);
                  return { products: page.rows.map(productToProto), nextPageToken: page.nextCursor };
                },
                GetPolicy: async (req) => {
                  const row = await getPolicy(pool, ownerOf(req.owner), req.policyId).catch(dbError);
                  if (!row) throw notFound('policy');
                  return { policy: toProto(row) };
                },
                ListPolicies: async (req) => {
                  const owner = ownerOf(req.owner);
                  const args = parseListRequest(req, owner, codec);
                  const page = await listPolicies(pool, owner, args, codec).catch(dbError);
                  return { policies: page.rows.map(toProto), nextPageToken: page.nextCursor };
                },
                ListPolicyDocuments: async (req) => {
                  const docs = await listDocuments(pool, ownerOf(req.owner), req.policyId).catch(dbError);
                  if (!docs) throw notFound('policy');
                  return { documents: docs.map(documentToProto) };
                },
                ReadPolicyDocumentContent: serverStreaming<ReadPolicyDocumentContentRequest__Output, ReadPolicyDocumentContentResponse>(async function* (req) {
                  const doc = await getDocument(pool, ownerOf(req.owner), req.policyId, req.documentId).catch(dbError);
                  if (!doc) throw notFound('document');
                  yield { document: documentToProto(doc), chunk: Buffer.alloc(0) };
                  for (let offset = 0; offset < doc.size_bytes; offset += CHUNK_BYTES) {
                    yield { chunk: await readChunk(pool, doc.document_id, offset).catch(dbError) };
                  }
                }),
                CheckBind: async (req) => {
                  const clockOf = await clockOfQuote(ownerOf(req.owner), req.quoteId).catch(dbError);
                  const out = await checkBind(pool, names, clockOf, {
                    owner: ownerOf(req.owner),
                    jobId: req.jobId,
                    quoteId: req.quoteId,
                    offerSha256: req.offerSha256,
                  }).catch(bindFailure);
                  publish(out.events);
                  return {
                    submissionId: out.submissionId,
                    ...(out.issued ? { policy: toProto(out.issued.policy), documents: out.issued.documents.map(documentToProto) } : {}),
                  };
                },
                ReleaseSubmissionQuotes: async (req) => {
                  if (!isUuid(req.submissionId)) throw notFound('submission');
                  const owner = ownerOf(req.owner);
                  const out = await withTx(pool, (tx) => releaseSubmissionQuotes(tx, names, owner, req.submissionId)).catch(dbError);
                  publish(out.events);
                  return { released: out.rows.length };
                },
                BindQuote: async (req) => {
                  const clockOf = await clockOfQuote(ownerOf(req.owner), req.quoteId).catch(dbError);
                  const out = await bindQuote(pool, names, clockOf, {
                    owner: ownerOf(req.owner),
                    jobId: req.jobId,
                    quoteId: req.quoteId,
                    offerSha256: req.offerSha256,
                    insuredLegalName: req.insuredLegalName,
                    effectiveDate: req.effectiveDate,
                  }).catch(bindFailure);
                  publish(out.events);
                  return { policy: toProto(out.policy), documents: out.documents.map(documentToProto) };
                },
                CreateTestClock: async (req) => {
                  const row = await createClock(pool, ownerOf(req.owner), { jobId: req.jobId, frozenTime: req.frozenTime, name: req.name ?? null }).catch(dbError);
                  return { testClock: clockToProto(row) };
                },
                GetTestClock: async (req) => {
                  const row = await getClock(pool, ownerOf(req.owner), req.testClockId).catch(dbError);
                  if (!row) throw notFound('test clock');
                  return { testClock: clockToProto(row) };
                },
                ListTestClocks: async (req) => {
                  const owner = ownerOf(req.owner);
                  const args = parseClockList(req, owner, clockCodec);
                  const page = await listClocks(pool, owner, args, clockCodec).catch(dbError);
                  return { testClocks: page.rows.map(clockToProto), nextPageToken: page.nextCursor };
                },
                DeleteTestClock: async (req) => {
                  const row = await deleteClock(pool, ownerOf(req.owner), { jobId: req.jobId, testClockId: req.testClockId }).catch(dbError);
                  return { testClock: clockToProto(row) };
                },
                AdvanceTestClock: async (req) => {
                  const step = await advanceStep(pool, names, ownerOf(req.owner), {
                    jobId: req.jobId,
                    testClockId: req.testClockId,
                    frozenTime: req.frozenTime,
                    batch: req.batchSize,
                  }).catch(dbError);
                  publish(step.events);
                  return {
                    testClock: clockToProto(step.clock),
                    done: step.done,
                    quotesExpired: step.quotesExpired,
                    policiesActivated: step.policiesActivated,
                    policiesExpired: step.policiesExpired,
                    referralsOverdue: step.referralsOverdue,
                  };
                },
              },
              logger,
              { registry },
            ),
          },
        ],
        stop: () => events.stop(),
      };
    },
  });
}
