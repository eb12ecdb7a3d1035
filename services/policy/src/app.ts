// Builds the policy service: the product catalogue and partners' policies over gRPC.
import { fileURLToPath } from 'node:url';
import { implement, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { notFound } from '@partner/shared/domain/errors';
import { isUuid } from '@partner/shared/domain/ids';
import { dbError } from '@partner/shared/db/pg';
import { startProcess, type RunningProcess, type StartOptions } from '@partner/shared/process/start';
import type { PolicyConfig } from './config.js';
import { getProduct } from './products.js';
import { loadCursorCodec } from '@partner/shared/domain/list-cursor';
import { getPolicy, listPolicies, ownerOf, parseListRequest, toProto } from './policies.js';

export const SCHEMA = 'policy';
/** Names the policy list in its cursors (a cursor of another list never passes). */
export const CURSOR_CONTEXT = 'partner.policy.v1/list-cursor';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

export function startPolicy(config: PolicyConfig, opts: StartOptions = {}): Promise<RunningProcess> {
  return startProcess({
    name: 'policy',
    config,
    ...opts,
    db: { schema: SCHEMA, migrationsDir: MIGRATIONS_DIR },
    build: async ({ pool, registry, logger }) => {
      const codec = await loadCursorCodec(pool, config.cursorSecrets, CURSOR_CONTEXT).catch(dbError);
      return {
        grpc: [
          {
            name: SERVICE_NAMES.policy,
            def: serviceDefs().policy,
            impl: implement(
              serviceDefs().policy,
              {
                GetProduct: async (req) => {
                  const row = isUuid(req.productId) ? await getProduct(pool, req.productId).catch(dbError) : undefined;
                  if (!row) throw notFound('product');
                  return { product: { productId: row.product_id, name: row.name, active: row.active } };
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
      };
    },
  });
}
