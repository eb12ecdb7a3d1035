// Operator commands of the auth service (clients, principals, signing keys), reached through
// `npm run -s admin -- <group> <command>`. They work on the auth schema directly, like a migration,
// so they need the database but not the running services.
import { EnvReader } from '@partner/shared/config/env';
import { readNats } from '@partner/shared/process/config';
import { natsNames, publishOnce } from '@partner/shared/nats/client';
import type { Pool } from '@partner/shared/db/pg';
import { command, identifier, required, UsageError, type AdminCommand, type CommandGroup, withAdminPool } from '@partner/shared/process/admin-cli';
import { isPermission, PERMISSIONS, type Permission } from '@partner/shared/domain/permissions';
import { MIGRATIONS_DIR, SCHEMA } from './schema.js';
import * as repo from './repo.js';
import { rotateKey } from './keys.js';

const withPool = <T>(fn: (pool: Pool) => Promise<T>): Promise<T> =>
  withAdminPool({ name: 'auth', schema: SCHEMA, migrationsDir: MIGRATIONS_DIR }, fn);

function permissionList(value: string): Permission[] {
  const list = value.split(',').map((p) => p.trim()).filter(Boolean);
  const bad = list.filter((p) => !isPermission(p));
  if (bad.length) throw new UsageError(`unknown permission(s) ${bad.join(', ')}; known: ${PERMISSIONS.join(', ')}`);
  return [...new Set(list)] as Permission[];
}

async function tenantOf(pool: Pool, partnerId: string, tenant: string | undefined): Promise<string> {
  if (tenant) return identifier(tenant, 'tenant');
  const r = await pool.query<{ tenant_id: string }>('SELECT tenant_id FROM partners WHERE partner_id = $1', [partnerId]);
  if (r.rowCount === 1) return r.rows[0]!.tenant_id;
  throw new UsageError(r.rowCount === 0 ? `unknown partner ${partnerId} (give --tenant to create it)` : `partner ${partnerId} exists in several tenants: give --tenant`);
}

/**
 * Tells every gateway that the client's provisioning or revocation changed (core NATS, under the
 * stack's NATS_PREFIX): they drop what they cached of it and read it afresh on its next request.
 * When NATS cannot be reached the change still takes effect, within the gateways' cache time
 * (CLIENT_STATE_CACHE_MS) instead of at once: the output says so.
 */
async function announce(clientId: string): Promise<{ effective: string }> {
  const env = new EnvReader();
  const nats = env.done(readNats(env));
  const pushed = await publishOnce(nats.natsUrl, natsNames(nats.natsPrefix).clientChangedSubject, JSON.stringify({ clientId }));
  return { effective: pushed ? 'on every gateway within seconds' : 'NATS not reachable: on every gateway within its client cache time (CLIENT_STATE_CACHE_MS)' };
}

/**
 * A command on one client (--client ID) that changes its state and announces the change: `change`
 * answers what to report, or undefined when there is no such client.
 */
function clientCommand(verb: string, summary: string, change: (pool: Pool, clientId: string) => Promise<object | undefined>): AdminCommand {
  return command({
    usage: `client ${verb} --client ID`,
    summary,
    options: { client: { type: 'string', value: 'ID', help: 'the client id (clientId of client create)' } },
    examples: [`client ${verb} --client 3f0c9a52-…`],
    run: async ({ values }) => {
      const clientId = required(values, 'client');
      return withPool(async (pool) => {
        const changed = await change(pool, clientId);
        if (!changed) throw new UsageError(`unknown client ${clientId}`);
        return { clientId, ...changed, ...(await announce(clientId)) };
      });
    },
  });
}

const PERMISSIONS_HELP = `permissions, comma-separated: ${PERMISSIONS.join(', ')}`;

export const client: CommandGroup = {
  summary: "partners' API clients: create one (its secret printed once), change its permissions or rate limit, disable it, revoke its tokens",
  commands: {
    create: command({
      usage: 'client create --tenant T --partner P --permissions health/read,policies/read,... [--name N]',
      summary: 'create an API client for a partner (the partner too, if new); prints clientId and clientSecret, shown this once',
      options: {
        tenant: { type: 'string', value: 'T', help: 'the tenant the partner belongs to' },
        partner: { type: 'string', value: 'P', help: 'the partner id (created with its first client)' },
        permissions: { type: 'string', value: 'LIST', help: PERMISSIONS_HELP },
        name: { type: 'string', value: 'N', help: 'a name for the client, for you (default: none)' },
      },
      examples: ['client create --tenant demo --partner broker-a --permissions health/read,submissions/read,submissions/write --name "Broker A"'],
      run: async ({ values }) => {
        const tenant = identifier(required(values, 'tenant'), 'tenant');
        const partnerId = identifier(required(values, 'partner'), 'partner');
        const permissions = permissionList(required(values, 'permissions'));
        return withPool(async (pool) => {
          const { clientId, clientSecret } = await repo.createClient(pool, {
            tenantId: tenant,
            partnerId,
            permissions,
            ...(values.name ? { name: values.name } : {}),
          });
          return { clientId, clientSecret, tenant, partnerId, permissions };
        });
      },
    }),
    permissions: command({
      usage: 'client permissions --client ID --permissions health/read,...',
      summary: "replace a client's permissions (every gateway sees the change within seconds)",
      options: {
        client: { type: 'string', value: 'ID', help: 'the client id' },
        permissions: { type: 'string', value: 'LIST', help: `the whole new list (empty: none); ${PERMISSIONS_HELP}` },
      },
      examples: ['client permissions --client 3f0c9a52-… --permissions health/read,policies/read'],
      run: async ({ values }) => {
        const clientId = required(values, 'client');
        const permissions = permissionList(values.permissions ?? '');
        return withPool(async (pool) => {
          const row = await repo.setPermissions(pool, clientId, permissions);
          if (!row) throw new UsageError(`unknown client ${clientId}`);
          return { clientId, tenant: row.tenant_id, partnerId: row.partner_id, permissions, ...(await announce(clientId)) };
        });
      },
    }),
    limits: command({
      usage: 'client limits --client ID (--rps N --burst M | --default)',
      summary: "set a client's own rate limit, or give it back the default (GATEWAY_RATE_LIMIT_*)",
      options: {
        client: { type: 'string', value: 'ID', help: 'the client id' },
        rps: { type: 'string', value: 'N', help: 'requests per second, sustained (above 0, at most 100000)' },
        burst: { type: 'string', value: 'M', help: 'requests at once above the rate (a whole number from 1)' },
        default: { type: 'boolean', help: 'drop the client\'s own limit: the default applies again' },
      },
      examples: ['client limits --client 3f0c9a52-… --rps 50 --burst 100', 'client limits --client 3f0c9a52-… --default'],
      run: async ({ values }) => {
        const clientId = required(values, 'client');
        let limit: { rps: number; burst: number } | null = null;
        if (!values.default) {
          const rps = Number(required(values, 'rps'));
          const burst = Number(required(values, 'burst'));
          if (!(rps > 0 && rps <= 100_000)) throw new UsageError('--rps must be a number of requests per second above 0');
          if (!Number.isInteger(burst) || burst < 1 || burst > 1_000_000) throw new UsageError('--burst must be a whole number from 1');
          limit = { rps, burst };
        }
        return withPool(async (pool) => {
          if (!(await repo.setRateLimit(pool, clientId, limit))) throw new UsageError(`unknown client ${clientId}`);
          return { clientId, rateLimit: limit ?? 'default', ...(await announce(clientId)) };
        });
      },
    }),
    disable: clientCommand('disable', 'disable a client for good: its tokens stop working and it gets no new ones', async (pool, clientId) => {
      const row = await repo.disableClient(pool, clientId);
      return row && { disabled: true, disabledAt: row.disabled_at.toISOString() };
    }),
    'revoke-tokens': clientCommand('revoke-tokens', 'revoke every token the client holds (it can get new ones with its secret)', async (pool, clientId) => {
      const row = await repo.revokeTokens(pool, clientId);
      return row && { tokensRevoked: true, tokenVersion: Number(row.token_version) };
    }),
  },
};

const principalFlags = {
  partner: { type: 'string', value: 'P', help: 'the partner id' },
  principal: { type: 'string', value: 'ID', help: 'the principal id partners send in x-principal-id (e.g. a broker of theirs)' },
  tenant: { type: 'string', value: 'T', help: "the partner's tenant (default: looked up; needed when the partner is in several)" },
} as const;

/** A principal command: `change` adds or removes the principal and says whether anything changed. */
function principalCommand(
  verb: 'add' | 'remove',
  outcome: 'added' | 'removed',
  summary: string,
  change: (pool: Pool, tenant: string, partnerId: string, principalId: string) => Promise<boolean>,
): AdminCommand {
  return command({
    usage: `principal ${verb} --partner P --principal ID [--tenant T]`,
    summary,
    options: principalFlags,
    examples: [`principal ${verb} --partner demo-partner --principal demo-broker`],
    run: async ({ values }) => {
      const partnerId = identifier(required(values, 'partner'), 'partner');
      const principalId = identifier(required(values, 'principal'), 'principal');
      return withPool(async (pool) => {
        const tenant = await tenantOf(pool, partnerId, values.tenant);
        const changed = await change(pool, tenant, partnerId, principalId);
        return { tenant, partnerId, principalId, [outcome]: changed };
      });
    },
  });
}

export const principal: CommandGroup = {
  summary: 'the principals a partner may act for (x-principal-id): add or remove one',
  commands: {
    add: principalCommand('add', 'added', 'register a principal for a partner (added: false when it was already)', repo.addPrincipal),
    remove: principalCommand('remove', 'removed', "remove a partner's principal (removed: false when it was not there)", repo.removePrincipal),
  },
};

export const key: CommandGroup = {
  summary: 'signing keys: rotate the token-signing key, or with --receipts the receipt-signing key',
  commands: {
    rotate: command({
      usage: 'key rotate [--receipts]',
      summary:
        'make a new signing key current and retire the one before, which still verifies until its tokens expire (needs AUTH_KEY_ENCRYPTION_KEY); with --receipts the receipt-signing key instead, whose retired keys stay published',
      options: {
        receipts: { type: 'boolean', help: "rotate the submission service's receipt-signing key instead of the token-signing key" },
      },
      examples: ['key rotate', 'key rotate --receipts'],
      run: async ({ values }) => {
        // scripts/admin.mjs sends `key rotate --receipts` to the submission service's receipts module.
        if (values.receipts) throw new UsageError('receipt keys are rotated by the submission service: run it through npm run -s admin -- key rotate --receipts');
        const env = new EnvReader();
        const kekB64 = env.str('AUTH_KEY_ENCRYPTION_KEY', { doc: 'the key-encryption key the auth service uses' });
        env.done({});
        // While the KEK rotates the variable lists several, newest first: new keys are sealed under it.
        const kek = Buffer.from(kekB64.split(',')[0]!.trim(), 'base64');
        if (kek.length !== 32) throw new UsageError('AUTH_KEY_ENCRYPTION_KEY (its first key) must decode to 32 bytes');
        return withPool(async (pool) => {
          const { kid, retired } = await rotateKey(pool, kek);
          return { kid, retired };
        });
      },
    }),
  },
};

export const groups = { client, principal, key };
