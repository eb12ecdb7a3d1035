// The operations listener every process has, apart from its public port: /livez (the process
// answers), /readyz (its dependencies answer) and /metrics (Prometheus). Not routed by the ingress.
import { createServer, type Server } from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';

export type ReadinessCheck = () => Promise<void>;

export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
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
}): Promise<OpsServer> {
  let draining = false;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, '{"status":"method not allowed"}');
    if (path === '/livez') return send(200, '{"status":"ok"}');
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
