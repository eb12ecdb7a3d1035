// Builds the policy service: the product catalogue and partners' policies over gRPC.
import { fileURLToPath } from 'node:url';
import { implement, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { notFound } from '@partner/shared/domain/errors';
import { isUuid } from '@partner/shared/domain/ids';
import { dbError } from '@partner/shared/db/pg';
import { startProcess, type RunningProcess, type StartOptions } from '@partner/shared/process/start';
import type { PolicyConfig } from './config.js';
import { getProduct, listProducts, parseListProducts, productToProto } from './products.js';
import { natsNames } from '@partner/shared/nats/client';
import { eventOutbox } from '@partner/shared/nats/event-outbox';
import { EVENT_OUTBOX_METRICS, OutboxRelay } from '@partner/shared/nats/outbox-relay';
import { loadCursorCodec } from '@partner/shared/db/cursor-keys';
import { getPolicy, listPolicies, ownerOf, parseListRequest, toProto } from './policies.js';
import { quoteService } from './quotes/service.js';
import { referralMetrics } from './quotes/metrics.js';
import { newUuid } from '@partner/shared/domain/ids';

export const SCHEMA = 'policy';
/** Names the policy list in its cursors (a cursor of another list never passes). */
export const CURSOR_CONTEXT = 'partner.policy.v1/list-cursor';
/** Names the product list in its cursors. */
export const PRODUCT_CURSOR_CONTEXT = 'partner.policy.v1/product-list-cursor';
/** Names the quote list in its cursors. */
export const QUOTE_CURSOR_CONTEXT = 'partner.policy.v1/quote-list-cursor';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

export function startPolicy(config: PolicyConfig, opts: StartOptions = {}): Promise<RunningProcess> {
  return startProcess({
    name: 'policy',
    config,
    ...opts,
    db: { schema: SCHEMA, migrationsDir: MIGRATIONS_DIR },
    nats: { connect: 'later' },
    build: async ({ pool, registry, logger, nats }) => {
      const codec = await loadCursorCodec(pool, config.cursorSecrets, CURSOR_CONTEXT).catch(dbError);
      const productCodec = await loadCursorCodec(pool, config.cursorSecrets, PRODUCT_CURSOR_CONTEXT).catch(dbError);
      // product.requirements_changed is recorded by the admin command (policy.event_outbox, in the
      // transaction of the change); this relay publishes it to the events stream. NATS may come later.
      const events = new OutboxRelay(pool, eventOutbox(natsNames(config.natsPrefix), config.eventsStream), {
        intervalMs: config.relayIntervalMs,
        logger,
        gauges: { registry, prefix: EVENT_OUTBOX_METRICS },
      });
      events.start();
      nats.onConnect((conn) => events.attach(conn));
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
            impl: implement(
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
