// Data access for the auth schema: tenants, partners, clients and principals.
import { prepared, type Pool } from '@partner/shared/db/pg';
import type { Permission } from '@partner/shared/domain/permissions';
import { hashSecret, newClientId, newClientSecret } from './secrets.js';

export interface ClientRow {
  client_id: string;
  tenant_id: string;
  partner_id: string;
  secret_hash: Buffer;
  permissions: string[];
  disabled_at: Date | null;
  rate_limit_rps: string | null;
  rate_limit_burst: number | null;
  /** Carried in the client's tokens as `tv`; `client revoke-tokens` raises it. */
  token_version: string;
  /** kid of the current signing key, read in the same round trip so rotations are seen at once. */
  active_kid: string | null;
}

export async function findClient(pool: Pool, clientId: string): Promise<ClientRow | undefined> {
  const r = await pool.query<ClientRow>(
    `SELECT client_id, tenant_id, partner_id, secret_hash, permissions, disabled_at, rate_limit_rps, rate_limit_burst, token_version,
            (SELECT kid FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1) AS active_kid
       FROM clients WHERE client_id = $1`,
    [clientId],
  );
  return r.rows[0];
}

async function ensurePartner(pool: Pool, tenantId: string, partnerId: string): Promise<void> {
  await pool.query('INSERT INTO tenants (tenant_id) VALUES ($1) ON CONFLICT DO NOTHING', [tenantId]);
  await pool.query('INSERT INTO partners (tenant_id, partner_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    tenantId,
    partnerId,
  ]);
}

export async function createClient(
  pool: Pool,
  input: { tenantId: string; partnerId: string; permissions: Permission[]; name?: string },
): Promise<{ clientId: string; clientSecret: string }> {
  await ensurePartner(pool, input.tenantId, input.partnerId);
  const clientId = newClientId();
  const clientSecret = newClientSecret();
  await pool.query(
    `INSERT INTO clients (client_id, tenant_id, partner_id, name, secret_hash, permissions)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [clientId, input.tenantId, input.partnerId, input.name ?? null, hashSecret(clientSecret), input.permissions],
  );
  return { clientId, clientSecret };
}

export async function setPermissions(pool: Pool, clientId: string, permissions: Permission[]) {
  const r = await pool.query<{ tenant_id: string; partner_id: string }>(
    'UPDATE clients SET permissions = $2, version = version + 1, updated_at = now() WHERE client_id = $1 RETURNING tenant_id, partner_id',
    [clientId, permissions],
  );
  return r.rows[0];
}

/** Sets the client's own rate limit, or clears it (null) so the gateway's default applies. */
export async function setRateLimit(pool: Pool, clientId: string, limit: { rps: number; burst: number } | null) {
  const r = await pool.query<{ client_id: string }>(
    `UPDATE clients SET rate_limit_rps = $2, rate_limit_burst = $3, version = version + 1, updated_at = now()
      WHERE client_id = $1 RETURNING client_id`,
    [clientId, limit?.rps ?? null, limit?.burst ?? null],
  );
  return r.rows[0];
}

export async function disableClient(pool: Pool, clientId: string) {
  const r = await pool.query<{ disabled_at: Date }>(
    `UPDATE clients SET disabled_at = coalesce(disabled_at, now()), version = version + 1, updated_at = now()
      WHERE client_id = $1 RETURNING disabled_at`,
    [clientId],
  );
  return r.rows[0];
}

/** Revokes every token issued to the client so far (its next token carries the new version). */
export async function revokeTokens(pool: Pool, clientId: string) {
  const r = await pool.query<{ token_version: string }>(
    `UPDATE clients SET token_version = token_version + 1, version = version + 1, updated_at = now()
      WHERE client_id = $1 RETURNING token_version`,
    [clientId],
  );
  return r.rows[0];
}

export interface ClientState {
  disabled: boolean;
  token_version: string;
  permissions: string[];
  rate_limit_rps: string | null;
  rate_limit_burst: number | null;
  version: string;
}

/** What the gateways apply to every request of the client (GetClientState). */
export async function clientState(pool: Pool, clientId: string): Promise<ClientState | undefined> {
  const r = await pool.query<ClientState>(
    prepared(
      `SELECT disabled_at IS NOT NULL AS disabled, token_version, permissions, rate_limit_rps, rate_limit_burst, version
         FROM clients WHERE client_id = $1`,
      [clientId],
    ),
  );
  return r.rows[0];
}

export async function addPrincipal(pool: Pool, tenantId: string, partnerId: string, principalId: string): Promise<boolean> {
  await ensurePartner(pool, tenantId, partnerId);
  const r = await pool.query(
    'INSERT INTO principals (tenant_id, partner_id, principal_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [tenantId, partnerId, principalId],
  );
  return r.rowCount === 1;
}

export async function removePrincipal(pool: Pool, tenantId: string, partnerId: string, principalId: string): Promise<boolean> {
  const r = await pool.query('DELETE FROM principals WHERE tenant_id = $1 AND partner_id = $2 AND principal_id = $3', [
    tenantId,
    partnerId,
    principalId,
  ]);
  return r.rowCount === 1;
}

export async function principalRegistered(pool: Pool, tenantId: string, partnerId: string, principalId: string): Promise<boolean> {
  const r = await pool.query('SELECT 1 FROM principals WHERE tenant_id = $1 AND partner_id = $2 AND principal_id = $3', [
    tenantId,
    partnerId,
    principalId,
  ]);
  return r.rowCount === 1;
}
