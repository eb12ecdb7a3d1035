// A private JetStream cluster of three nats-servers on this machine (issue 48, 10): ephemeral client,
// route and monitoring ports on loopback, a store directory of its own for each node under one temp
// folder, every node routed to the others. Ready once every node's /healthz answers ok (which, with
// JetStream on, means the node sees the cluster's meta leader), so an R3 stream can be created at once.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts, sleep } from './stack.mjs';

/** The nats-server binary: NATS_SERVER_BIN, else the first of PATH, /usr/sbin and /usr/local/bin that runs. */
export function natsServerBin() {
  return (
    process.env.NATS_SERVER_BIN ??
    ['nats-server', '/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find((b) => spawnSync(b, ['--version'], { stdio: 'ignore' }).status === 0)
  );
}

export class NatsCluster {
  /** @param {{ nodes?: number }} [opts] */
  static async start({ nodes = 3 } = {}) {
    const bin = natsServerBin();
    if (!bin) throw new Error('nats-server is not installed (Debian/Ubuntu: apt-get install nats-server), or set NATS_SERVER_BIN');
    const c = new NatsCluster();
    c.dir = mkdtempSync(join(tmpdir(), 'nats-cluster-'));
    const ports = await freePorts(nodes * 3);
    c.nodes = Array.from({ length: nodes }, (_, i) => ({ name: `n${i + 1}`, client: ports[i * 3], route: ports[i * 3 + 1], monitor: ports[i * 3 + 2] }));
    const routes = c.nodes.map((n) => `nats://127.0.0.1:${n.route}`).join(',');
    for (const n of c.nodes) {
      const store = join(c.dir, n.name);
      mkdirSync(store);
      // prettier-ignore
      const args = ['-js', '-a', '127.0.0.1', '-p', String(n.client), '-m', String(n.monitor), '-sd', store,
        '--name', n.name, '--cluster_name', 'chaos', '--cluster', `nats://127.0.0.1:${n.route}`, '--routes', routes];
      n.child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      n.stderr = '';
      n.child.stderr.on('data', (d) => (n.stderr = (n.stderr + d.toString()).slice(-4000)));
      n.exited = new Promise((resolve) => n.child.once('exit', (code, signal) => resolve(code ?? signal)));
    }
    await c.ready();
    return c;
  }

  /** The client URLs, comma-separated, as NATS_URL takes them. */
  get url() {
    return this.nodes.map((n) => `nats://127.0.0.1:${n.client}`).join(',');
  }

  /** Every live node answers /healthz with ok (JetStream meta leader known). */
  async ready(timeoutMs = 60_000) {
    const until = Date.now() + timeoutMs;
    for (const n of this.nodes.filter((x) => x.child.exitCode === null && x.child.signalCode === null)) {
      for (;;) {
        const ok = await fetch(`http://127.0.0.1:${n.monitor}/healthz`, { signal: AbortSignal.timeout(2_000) })
          .then(async (r) => r.ok && (await r.json()).status === 'ok')
          .catch(() => false);
        if (ok) break;
        if (n.child.exitCode !== null) throw new Error(`nats-server ${n.name} exited: ${n.stderr}`);
        if (Date.now() > until) throw new Error(`nats-server ${n.name} not healthy after ${timeoutMs} ms: ${n.stderr}`);
        await sleep(200);
      }
    }
  }

  /** SIGKILLs node i (0-based). */
  kill(i) {
    this.nodes[i].child.kill('SIGKILL');
    return this.nodes[i].exited;
  }

  async stop() {
    await Promise.all(
      this.nodes.map(async (n) => {
        if (n.child.exitCode !== null || n.child.signalCode !== null) return;
        const t = setTimeout(() => n.child.kill('SIGKILL'), 10_000);
        n.child.kill('SIGTERM');
        await n.exited;
        clearTimeout(t);
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}
