// Builds the gateway: the Koa app (createGatewayApp, importable by tests with injected clients) and
// the running service on the shared start-up (startGateway: startProcess with its gRPC clients, NATS,
// JWKS and the public listener). Readiness says "this pod can serve": it is listening and not
// draining, like every process (process/start.ts). Shared dependencies (NATS, the gRPC services, the
// token keys of the auth service) stay out of it: when one is down every gateway would leave the
// ingress at once, and partners would get the ingress's 503 instead of our envelope (the request path
// answers 503 `unavailable` with Retry-After itself, and mutations are accepted into the outbox while
// NATS is down). They are reported on /readyz's body and /dependencies.
import { cachedProductRules, type ProductLookup } from '@partner/shared/domain/product-cache';
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from '@partner/shared/telemetry/logger';
import { listenHttp } from '@partner/shared/process/http';
import { startProcess } from '@partner/shared/process/start';
import type { Registry } from 'prom-client';
import type { GatewayConfig } from './config.js';
import type { GatewayState } from './context.js';
import { pipeline } from './middleware/pipeline.js';
import { authenticator } from './middleware/authenticate.js';
import { cachedResolver, guard, type PrincipalResolver } from './middleware/guard.js';
import { deprecationHeaders } from './http/deprecation.js';
import { setJsonValueLimit } from './http/body.js';
import { KeyStore } from './jwks.js';
import { rateLimiter } from './middleware/rate-limit.js';
import { gatewayMetrics, type GatewayMetrics } from './metrics.js';
import type { Clients, RouteDeps } from './resources/deps.js';
import { RESOURCES } from './resources/index.js';
import { apiIndexRoute, openapiRoute } from './openapi/route.js';
import { SettlementWaiters } from './settlement-waiters.js';
import { SettledJobs } from './jobs/settled-jobs.js';
import { KnownResources } from './cache/known-resources.js';
import { ClientStates } from './client-state.js';
import { ConsoleSessions, consoleCookieName } from './resources/console/sessions.js';
import { ensureRequestLogStream, natsNames } from '@partner/shared/nats/client';
import { RequestRecorder, requestLogMetrics } from './request-log/recorder.js';
import { tracerProviderRegistered } from '@partner/shared/telemetry/tracing';

export interface GatewayAppDeps {
  config: GatewayConfig;
  logger: Logger;
  clients: Clients;
  keys: KeyStore;
  registry: Registry;
  metrics: GatewayMetrics;
  waiters: SettlementWaiters;
  clientStates: ClientStates;
  /** Products with their requirements (POST /v1/submissions/validate); made here when not given. */
  products?: ProductLookup;
  /** True once the drain started (startGateway's stop). */
  draining?: () => boolean;
  /** The request log's recorder (request-log/recorder.ts); nothing is recorded without it. */
  recorder?: RequestRecorder;
}

export function createGatewayApp(deps: GatewayAppDeps): Koa<GatewayState> {
  const { config, logger, clients } = deps;
  const metrics = deps.metrics;
  const app = new Koa<GatewayState>({ proxy: true });
  setJsonValueLimit(app, config.jsonMaxValues);
  // What reaches Koa's own error event is past our error handler: a client that went away mid-body
  // or mid-download. Log it quietly instead of Koa's default print to stderr.
  app.on('error', (err: Error & { code?: string }) => logger.debug({ err: err.message, code: err.code }, 'connection error'));

  const resolvePrincipal: PrincipalResolver = cachedResolver(
    async (tenantId, partnerId, principalId, timeoutMs) =>
      (await clients.auth.ResolvePrincipal({ tenantId, partnerId, principalId }, { timeoutMs: Math.min(timeoutMs, config.grpcTimeoutMs) }))
        .registered,
    config.principalCacheMs,
  );
  const consoleAuth = {
    cookieName: consoleCookieName(config.console.cookieSecure),
    sessions: new ConsoleSessions(clients.auth, { cacheMs: config.console.sessionCacheMs }),
  };
  const routeDeps: RouteDeps = {
    console: { auth: consoleAuth, clientStates: deps.clientStates },
    config,
    clients,
    waiters: deps.waiters,
    guard: (permission) => guard(permission, resolvePrincipal),
    products: deps.products ?? cachedProductRules(clients.policy, config.productCacheMs),
    ...(deps.draining ? { draining: deps.draining } : {}),
  };

  // Strict: a path with a trailing slash is another path, which no route has (404 not_found), rather
  // than an alias of one (GET /v1/submissions/ answered the list; a method the alias lacked, 405).
  const router = new Router<GatewayState>({ prefix: '/v1', strict: true });
  for (const resource of RESOURCES) resource.routes?.(router, routeDeps);

  app.use(
    pipeline({
      logger,
      metrics,
      requestTimeoutMs: config.requestTimeoutMs,
      ...(tracerProviderRegistered() ? { tracing: { trustTraceparent: config.trustTraceparent } } : {}),
      publicRoutes: [apiIndexRoute(config), openapiRoute(config), ...RESOURCES.flatMap((r) => (r.publicRoute ? [r.publicRoute(routeDeps)] : []))],
      authenticate: authenticator({
        issuer: config.issuer,
        audience: config.audience,
        scope: config.scope,
        keys: deps.keys,
        maxLifetimeS: config.tokenMaxLifetimeS,
        clients: deps.clientStates,
        stateTimeoutMs: config.grpcTimeoutMs,
        onFailure: metrics.tokenFailure,
        console: consoleAuth,
      }),
      rateLimit: rateLimiter({
        defaults: config.rateLimit,
        replicas: config.rateLimitReplicas,
        onReject: metrics.rateLimited,
      }),
      ...(deps.recorder ? { record: deps.recorder.record.bind(deps.recorder) } : {}),
    }),
  );
  app.use(deprecationHeaders(config.deprecations));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

export interface GatewayService {
  ports: { http: number; ops: number };
  stop(): Promise<void>;
}

export async function startGateway(config: GatewayConfig, opts: { logger?: Logger } = {}): Promise<GatewayService> {
  const names = natsNames(config.natsPrefix);
  const running = await startProcess({
    name: 'gateway',
    config,
    logger: opts.logger,
    // The clients and NATS are reported, not gating readiness: see the header.
    clients: { config },
    // NATS may come later than the gateway: until then waits end at their deadline with one re-read.
    nats: { connect: 'later' },
    build: async ({ registry, logger, clients, nats, draining }) => {
      const keys = new KeyStore(config.jwksUrl, 'ES256');
      await keys.refresh().catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'JWKS not reachable yet; will fetch on first token'));
      const metrics = gatewayMetrics(registry, { maxWaiters: config.maxWaiters, maxWaitersPerPartner: config.maxWaitersPerPartner });
      const waiters = new SettlementWaiters(
        config.maxWaiters,
        logger,
        metrics.waiters,
        config.maxWaitersPerPartner,
        new SettledJobs(config.settledJobsMax, metrics.settledJobs),
        new KnownResources(config.knownResourcesMax, metrics.knownResources),
      );
      const clientStates = new ClientStates(
        async (clientId, timeoutMs) => {
          const s = await clients.auth.GetClientState({ clientId }, { timeoutMs });
          return {
            disabled: !s.found || s.disabled,
            tokenVersion: Number(s.tokenVersion),
            permissions: new Set(s.permissions),
            rateLimit: s.rateLimitRps > 0 && s.rateLimitBurst >= 1 ? { rps: s.rateLimitRps, burst: s.rateLimitBurst } : undefined,
          };
        },
        { ttlMs: config.clientStateCacheMs, unpushedTtlMs: 2_000, logger },
      );
      const products = cachedProductRules(clients.policy, config.productCacheMs);
      nats.onConnect((conn) => {
        waiters.attach(conn, names.settledSubject);
        waiters.attachFeed(conn, names.feedWakeSubject);
        clientStates.attach(conn, names.clientChangedSubject);
        products.attach(conn, names.productChangedSubject);
      });
      // The request log: recorded after each answer, shipped in batches on its stream (request-log/recorder.ts).
      const recorder = config.requestLog.enabled
        ? new RequestRecorder({
            config: config.requestLog,
            metrics: requestLogMetrics(registry),
            logger,
            subject: names.requestLogSubject,
            connection: () => nats.current,
            ensureStream: async (nc) => ensureRequestLogStream(await nc.jetstreamManager({ timeout: 2_000 }), names, { replicas: 1, duplicateWindowMs: 60_000 }),
          })
        : undefined;
      const handle = createGatewayApp({ config, logger, clients, keys, registry, metrics, waiters, clientStates, products, draining, ...(recorder ? { recorder } : {}) }).callback();

      // Slow clients are cut off: headers must arrive within headersTimeout, the whole request within
      // requestTimeout (Node answers 408 and closes), checked every second rather than Node's default 30 s.
      // Waiting under Prefer happens after the request is received, so it is not limited by these.
      // On shutdown in-flight transfers (uploads, downloads) get the drain budget (SHUTDOWN_DRAIN_MS,
      // the chart's drainSeconds) to finish before they are cut (process/http.ts).
      const http = await listenHttp({
        name: 'http',
        host: config.host,
        port: config.port,
        options: { headersTimeout: config.headersTimeoutMs, requestTimeout: config.receiveTimeoutMs, connectionsCheckingInterval: 1_000 },
        handle: (req, res) => {
          // While draining, every answer closes its connection: the client's next request goes to another pod.
          if (draining()) res.setHeader('connection', 'close');
          void handle(req, res);
        },
        configure: (server) => (server.keepAliveTimeout = 65_000),
        // Waiting requests answer now (202 / processing after one re-read) instead of holding shutdown.
        onDrain: () => waiters.cancelAll(),
        logger,
      });

      return {
        listeners: [http],
        dependencies: {
          // Keys once fetched keep verifying tokens; a gateway that never got them answers 503
          // `unavailable` to authenticated requests until it does (jwks.ts), and reports it here.
          jwks: async () => {
            if (!keys.loaded) await keys.refresh();
          },
        },
        stop: async () => {
          waiters.stop();
          clientStates.stop();
          await recorder?.stop();
        },
      };
    },
  });
  return { ports: { http: running.ports.http!, ops: running.ports.ops! }, stop: running.stop };
}
