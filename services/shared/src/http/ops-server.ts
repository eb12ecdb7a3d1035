// The operations listener every process has, apart from its public port: /livez (the process
// answers and none of its liveness checks fails: a wedged process is restarted), /readyz (this pod
// can serve: it is listening and not draining), /dependencies (what the process last saw of the
// systems it uses; information only) and /metrics (Prometheus). Not routed by the ingress.
//
// Readiness never follows a shared dependency (PostgreSQL, NATS, a peer gRPC service): when one is
// down every replica would turn unready at once, the Service would have no endpoints, and callers
// would get the ingress's (or the gRPC channel's) bare refusal instead of our answer. Each call the
// outage breaks answers UNAVAILABLE / 503 `unavailable` with a retry hint instead (domain/outage.ts),
// and the process serves again as soon as the dependency is back. The dependency checks are still
// run and reported: in /readyz's body (the last results, never waited for, so a probe is answered at
// once whatever a check costs) and on /dependencies (a fresh round, waited for).
import { createServer, type Server } from 'node:http';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/** A check of a dependency (PostgreSQL, NATS, a peer): resolves when it answers. Reported, never gating readiness. */
export type DependencyCheck = () => Promise<void>;
/** A liveness check: a reason when the process is wedged (the kubelet restarts it), else undefined. */
export type LivenessCheck = () => string | undefined;

/**
 * The process's metrics registry. No default labels: a `service` label on every series would be
 * overwritten by the Prometheus Operator's target label of the same name (and kept as
 * `exported_service`). The scrape target's `job` (`<release>-<component>`), `service`, `namespace` and
 * `pod` identify the process; partner_process_info{component} says which component it is.
 */
export function createRegistry(component: string): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'partner_process_info',
    help: 'Always 1: which component this process is, and its Node.js version.',
    labelNames: ['component', 'node_version'],
    registers: [registry],
  }).set({ component, node_version: process.versions.node }, 1);
  return registry;
}

export interface OpsServer {
  port: number;
  /** From now on /readyz answers 503 (draining). */
  setDraining(): void;
  close(): Promise<void>;
}

async function withTimeout(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([p, new Promise<void>((_, rej) => (timer = setTimeout(() => rej(new Error('timed out')), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a dependency check may take before it is reported failed. */
const CHECK_TIMEOUT_MS = 2_000;
/** /readyz starts a new round of dependency checks (in the background) when the last is older than this. */
const REPORT_STALE_MS = 1_000;

export async function startOpsServer(opts: {
  host: string;
  port: number;
  registry: Registry;
  /** Reported on /readyz and /dependencies; a failing one never makes the process unready. */
  dependencies: Record<string, DependencyCheck>;
  liveness?: Record<string, LivenessCheck>;
}): Promise<OpsServer> {
  let draining = false;
  /** The last round's results, by dependency: `ok` or `failed: <reason>`. */
  let report: Record<string, string> = {};
  let reportAt = 0;
  let round: Promise<Record<string, string>> | undefined;
  const checkAll = (): Promise<Record<string, string>> =>
    (round ??= (async () => {
      const results: Record<string, string> = {};
      await Promise.all(
        Object.entries(opts.dependencies).map(async ([name, check]) => {
          try {
            await withTimeout(check(), CHECK_TIMEOUT_MS);
            results[name] = 'ok';
          } catch (err) {
            results[name] = `failed: ${(err as Error).message}`;
          }
        }),
      );
      report = results;
      reportAt = Date.now();
      return results;
    })().finally(() => (round = undefined)));
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, '{"status":"method not allowed"}');
    if (path === '/livez') {
      const failed = Object.entries(opts.liveness ?? {}).flatMap(([name, check]) => {
        const reason = check();
        return reason === undefined ? [] : [[name, `failed: ${reason}`] as const];
      });
      if (failed.length > 0) return send(503, JSON.stringify({ status: 'wedged', checks: Object.fromEntries(failed) }));
      return send(200, '{"status":"ok"}');
    }
    if (path === '/readyz') {
      if (draining) return send(503, JSON.stringify({ status: 'draining' }));
      // Answered now: the dependencies as last seen, a new round started when that is stale.
      if (Date.now() - reportAt >= REPORT_STALE_MS) void checkAll();
      return send(200, JSON.stringify({ status: 'ok', dependencies: report }));
    }
    if (path === '/dependencies') {
      void checkAll().then((results) => {
        const ok = Object.values(results).every((r) => r === 'ok');
        send(200, JSON.stringify({ status: ok ? 'ok' : 'degraded', dependencies: results }));
      });
      return;
    }
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => send(200, text, opts.registry.contentType),
        () => send(500, '{"status":"metrics failed"}'),
      );
      return;
    }
    send(404, '{"status":"not found"}');
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : opts.port);
    });
  });
  // The first report, so /readyz has one from the start.
  if (Object.keys(opts.dependencies).length > 0) void checkAll();
  return {
    port,
    setDraining: () => {
      draining = true;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
