// Builds the auth service on the shared start-up (startProcess): the token server (HTTP, a listener
// of its own), the gRPC API for the gateway and the ops listener; its metrics are in metrics.ts.
// main.ts runs it; tests start it in-process on ephemeral ports.
import type { Pool } from '@partner/shared/db/pg';
import { implement, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { listenHttp } from '@partner/shared/process/http';
import { startProcess, type StartOptions } from '@partner/shared/process/start';
import type { AuthConfig } from './config.js';
import { authMetrics } from './metrics.js';
import { createTokenApp } from './token-server.js';
import { clientState, principalRegistered } from './repo.js';
import { loadSigningKey, resealKeys } from './keys.js';
import { dbError } from '@partner/shared/db/pg';
import { DomainError } from '@partner/shared/domain/errors';
import { consoleSession, createConsoleLink, endConsoleSession, exchangeConsoleLink, pruneConsole } from './console-sessions.js';
import { MIGRATIONS_DIR, SCHEMA } from './schema.js';

export interface AuthService {
  ports: { http: number; grpc: number; ops: number };
  pool: Pool;
  stop(): Promise<void>;
}

export async function startAuth(config: AuthConfig, opts: StartOptions = {}): Promise<AuthService> {
  const service = await startProcess({
    name: 'auth',
    config,
    ...opts,
    db: { schema: SCHEMA, migrationsDir: MIGRATIONS_DIR },
    build: async ({ pool, registry, logger }) => {
      // Signing keys sealed under an older KEK are re-sealed under the newest (KEK rotation); a key no
      // configured KEK opens stops the start here, with a message saying what to do.
      const resealed = await resealKeys(pool, config.keyEncryptionKeys, (msg, kid) => logger.warn({ kid }, msg));
      if (resealed.length > 0) logger.info({ kids: resealed }, 'signing keys re-sealed under the newest key-encryption key');
      // Make sure a signing key exists before the first token request.
      await loadSigningKey(pool, config.keyEncryptionKeys);

      const app = createTokenApp({ config, pool, logger, metrics: authMetrics(registry) });
      // The token server: its own HTTP listener, drained with the gRPC server on shutdown.
      const tokenServer = await listenHttp({
        name: 'http',
        host: config.host,
        port: config.httpPort,
        options: { headersTimeout: 10_000, requestTimeout: 15_000, connectionsCheckingInterval: 1_000 },
        handle: app.callback(),
        logger,
      });

      return {
        listeners: [tokenServer],
        grpc: [
          {
            name: SERVICE_NAMES.auth,
            def: serviceDefs().auth,
            impl: implement(
              serviceDefs().auth,
              {
                ResolvePrincipal: async (req) => {
                  const registered = await principalRegistered(pool, req.tenantId, req.partnerId, req.principalId).catch(dbError);
                  return { registered };
                },
                ListPartners: async () => {
                  const r = await pool.query<{ tenant_id: string; partner_id: string }>('SELECT tenant_id, partner_id FROM partners ORDER BY tenant_id, partner_id').catch(dbError);
                  return { partners: r.rows.map((p) => ({ tenantId: p.tenant_id, partnerId: p.partner_id })) };
                },
                CreateConsoleLink: async (req) => {
                  const link = await createConsoleLink(pool, req.clientId, req.readOnly).catch(dbError);
                  if (!link) throw new DomainError('not_found', 'no such enabled client');
                  // Now and then, not on a timer of its own: minting is rare.
                  void pruneConsole(pool).catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'console prune failed'));
                  return { token: link.token, expiresAt: link.expiresAt.toISOString() };
                },
                ExchangeConsoleLink: async (req) => {
                  const r = await exchangeConsoleLink(pool, req.token, config.consoleSessionTtlSeconds).catch(dbError);
                  return { outcome: r.outcome, sessionId: r.sessionId ?? '', expiresAt: r.expiresAt?.toISOString() ?? '' };
                },
                GetConsoleSession: async (req) => {
                  const s = await consoleSession(pool, req.sessionId).catch(dbError);
                  if (!s) return { found: false, clientId: '', tenantId: '', partnerId: '', readOnly: false, expiresAt: '', tokenVersion: '0', csrfToken: '' };
                  return {
                    found: true,
                    clientId: s.client_id,
                    tenantId: s.tenant_id,
                    partnerId: s.partner_id,
                    readOnly: s.read_only,
                    expiresAt: s.expires_at.toISOString(),
                    tokenVersion: s.token_version,
                    csrfToken: s.csrf_token,
                  };
                },
                EndConsoleSession: async (req) => ({ ended: await endConsoleSession(pool, req.sessionId).catch(dbError) }),
                GetClientState: async (req) => {
                  const c = await clientState(pool, req.clientId).catch(dbError);
                  if (!c) return { found: false, disabled: true, tokenVersion: '0', permissions: [], rateLimitRps: 0, rateLimitBurst: 0, version: '0' };
                  return {
                    found: true,
                    disabled: c.disabled,
                    tokenVersion: c.token_version,
                    permissions: c.permissions,
                    rateLimitRps: c.rate_limit_rps ? Number(c.rate_limit_rps) : 0,
                    rateLimitBurst: c.rate_limit_burst ?? 0,
                    version: c.version,
                  };
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
  return { ports: { http: service.ports.http!, grpc: service.ports.grpc!, ops: service.ports.ops! }, pool: service.pool!, stop: service.stop };
}
