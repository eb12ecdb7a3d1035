// The operations listener every process has, apart from its public port: /livez (the process
// answers and none of its liveness checks fails: a wedged process is restarted), /readyz (this pod
// can serve) and /metrics (Prometheus). Not routed by the ingress.
import { createServer, type Server } from 'node:http';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export type ReadinessCheck = () => Promise<void>;
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

export async function startOpsServer(opts: {
  host: string;
  port: number;
  registry: Registry;
  checks: Record<string, ReadinessCheck>;
  liveness?: Record<string, LivenessCheck>;
}): Promise<OpsServer> {
  let draining = false;
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
      const results: Record<string, string> = {};
      void Promise.all(
        Object.entries(opts.checks).map(async ([name, check]) => {
          try {
            await withTimeout(check(), 2_000);
            results[name] = 'ok';
          } catch (err) {
            results[name] = `failed: ${(err as Error).message}`;
          }
        }),
      ).then(() => {
        const ok = Object.values(results).every((r) => r === 'ok');
        send(ok ? 200 : 503, JSON.stringify({ status: ok ? 'ok' : 'unready', checks: results }));
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
  return {
    port,
    setDraining: () => {
      draining = true;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
