// Operator commands of the policy service: the product catalogue (and policy import).
// Reached through `npm run -s admin -- product|policy <command>`.
import type { Pool } from '@partner/shared/db/pg';
import { identifier, parseFlags, required, UsageError, type CommandGroup, withAdminPool } from '@partner/shared/process/admin-cli';
import { isUuid } from '@partner/shared/domain/ids';
import { createReadStream } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { MIGRATIONS_DIR, SCHEMA } from './app.js';
import { productRecord, setRequirements, upsertProduct } from './products.js';
import { readFile } from 'node:fs/promises';
import { EnvReader } from '@partner/shared/config/env';
import { readNats } from '@partner/shared/process/config';
import { natsNames, publishOnce } from '@partner/shared/nats/client';
import { parseRequirements, RequirementsError } from '@partner/shared/domain/requirements';
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
      const row = await withPool((pool) => upsertProduct(pool, { productId, name, active: !values.inactive }));
      // A product (de)activated is seen at once by workers and gateways, as a requirements change is.
      const env = new EnvReader();
      const nats = env.done(readNats(env));
      await publishOnce(nats.natsUrl, natsNames(nats.natsPrefix).productChangedSubject, JSON.stringify({ productId }));
      return { productId: row.product_id, name: row.name, active: row.active, created: row.created };
    },
  },
  requirements: {
    usage: 'product requirements set --id <uuid> FILE.json   (the whole document; bumps requirementsVersion, tells every partner)',
    run: async (argv) => {
      const [sub, ...rest] = argv;
      if (sub !== 'set') throw new UsageError(sub ? `unknown command: product requirements ${sub}` : 'give a command: product requirements set');
      const { values, positionals } = parseFlags(rest, { id: { type: 'string' } });
      const productId = required(values, 'id').toLowerCase();
      if (!isUuid(productId)) throw new UsageError(`--id must be a UUID, got "${productId}"`);
      if (positionals.length !== 1) throw new UsageError('give exactly one FILE.json');
      const file = positionals[0]!;
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`${file} is not valid JSON: ${(err as Error).message}`);
      }
      let requirements;
      try {
        requirements = parseRequirements(doc);
      } catch (err) {
        if (err instanceof RequirementsError) throw new UsageError(`${file}: ${err.problems.map((p) => `${p.path} ${p.issue}`).join('; ')} (nothing was changed)`);
        throw err;
      }
      const env = new EnvReader();
      const nats = env.done(readNats(env));
      const names = natsNames(nats.natsPrefix);
      const out = await withPool((pool) => setRequirements(pool, names, productId, requirements));
      if (!out) throw new Error(`unknown product ${productId} (add it with: product add --id ${productId} --name NAME)`);
      // Workers and gateways drop their cached copy of the product at once; without NATS, within their cache time.
      const pushed = await publishOnce(nats.natsUrl, names.productChangedSubject, JSON.stringify({ productId, requirementsVersion: Number(out.row.requirements_version) }));
      return {
        ...productRecord(out.row),
        requirements: out.row.requirements,
        effective: pushed ? 'at once on every worker and gateway' : 'NATS not reachable: within the product cache time of workers (WORKER_PRODUCT_CACHE_MS) and gateways (GATEWAY_PRODUCT_CACHE_MS)',
      };
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
