// Builds the policy service: product catalogue (and policies) over gRPC.
import { fileURLToPath } from 'node:url';
import { implement, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { notFound } from '@partner/shared/errors';
import { isUuid } from '@partner/shared/ids';
import { dbError } from '@partner/shared/pg';
import type { Logger } from '@partner/shared/logger';
import { startGrpcService, type RunningService } from '@partner/shared/service';
import type { PolicyConfig } from './config.js';
import { getProduct } from './products.js';

export const SCHEMA = 'policy';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

export function startPolicy(config: PolicyConfig, opts: { logger?: Logger; migrate?: boolean } = {}): Promise<RunningService> {
  return startGrpcService({
    base: config,
    db: config,
    grpcPort: config.grpcPort,
    schema: SCHEMA,
    migrationsDir: MIGRATIONS_DIR,
    ...opts,
    build: async ({ pool, logger }) => ({
      bindings: [
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
            },
            logger,
          ),
        },
      ],
    }),
  });
}
