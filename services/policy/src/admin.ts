// Operator commands of the policy service: the product catalogue (and policy import).
// Reached through `npm run -s admin -- product|policy <command>`.
import type { Pool } from '@partner/shared/db/pg';
import { identifier, parseFlags, required, UsageError, type CommandGroup, withAdminPool } from '@partner/shared/process/admin-cli';
import { isUuid } from '@partner/shared/domain/ids';
import { createReadStream } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { MIGRATIONS_DIR, SCHEMA } from './app.js';
import { upsertProduct } from './products.js';
import { importPolicies } from './import.js';

const withPool = <T>(fn: (pool: Pool) => Promise<T>): Promise<T> =>
  withAdminPool({ name: 'policy', schema: SCHEMA, migrationsDir: MIGRATIONS_DIR }, fn);

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

/**
 * The file's lines, read only once iterated: a readline interface created earlier would emit lines
 * while the import is still connecting, and those would be lost.
 */
async function* readLines(file: string): AsyncGenerator<string> {
  yield* createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
}

export const policy: CommandGroup = {
  import: {
    // The policy service does not own partners (auth does), so the partner's tenant is given, not
    // looked up: policies are always created for exactly the (tenant, partner) the operator names.
    usage: 'policy import --tenant T --partner P FILE.jsonl   (one policy per line; all or nothing)',
    run: async (argv) => {
      const { values, positionals } = parseFlags(argv, { tenant: { type: 'string' }, partner: { type: 'string' } });
      const tenantId = identifier(required(values, 'tenant'), 'tenant');
      const partnerId = identifier(required(values, 'partner'), 'partner');
      if (positionals.length !== 1) throw new UsageError('give exactly one FILE.jsonl');
      const file = positionals[0]!;
      try {
        await access(file, constants.R_OK);
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      return withPool((pool) => importPolicies(pool, { tenantId, partnerId }, readLines(file)));
    },
  },
};

export const groups: Record<string, CommandGroup> = { product, policy };
