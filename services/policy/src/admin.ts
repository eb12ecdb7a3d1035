// Operator commands of the policy service: the product catalogue (and policy import).
// Reached through `npm run -s admin -- product|policy <command>`.
import { createLogger } from '@partner/shared/logger';
import { EnvReader, readDb } from '@partner/shared/config';
import { createPool, migrate, type Pool } from '@partner/shared/pg';
import { parseFlags, required, UsageError, type CommandGroup } from '@partner/shared/cli';
import { isUuid } from '@partner/shared/ids';
import { MIGRATIONS_DIR, SCHEMA } from './app.js';
import { upsertProduct } from './products.js';

export async function withPool<T>(fn: (pool: Pool) => Promise<T>): Promise<T> {
  const env = new EnvReader();
  const db = env.done(readDb(env));
  const logger = createLogger('policy-admin', 'warn', process.stderr as never);
  const pool = createPool({ url: db.databaseUrl, schema: SCHEMA, max: 2, applicationName: 'policy-admin', logger });
  try {
    await migrate(pool, SCHEMA, MIGRATIONS_DIR, logger);
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

export const product: CommandGroup = {
  add: {
    usage: 'product add --id <uuid> --name <name> [--inactive]',
    run: async (argv) => {
      const { values } = parseFlags(argv, { id: { type: 'string' }, name: { type: 'string' }, inactive: { type: 'boolean' } });
      const productId = required(values, 'id').toLowerCase();
      if (!isUuid(productId)) throw new UsageError(`--id must be a UUID, got "${productId}"`);
      const name = required(values, 'name');
      if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
      return withPool(async (pool) => {
        const row = await upsertProduct(pool, { productId, name, active: !values.inactive });
        return { productId: row.product_id, name: row.name, active: row.active, created: row.created };
      });
    },
  },
};

export const groups: Record<string, CommandGroup> = { product };
