// A private nats-server (JetStream on, own port and storage) for tests that stop and restart the
// broker: the machine's shared NATS must never be disturbed by a test.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort } from './poll.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The nats-server binary: NATS_SERVER_BIN, else the first of PATH, /usr/sbin and /usr/local/bin that runs. */
const BIN =
  process.env.NATS_SERVER_BIN ??
  ['nats-server', '/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find((b) => spawnSync(b, ['--version'], { stdio: 'ignore' }).status === 0) ??
  'nats-server';

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.end();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

export class PrivateNats {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'nats-test-'));
  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateNats> {
    const n = new PrivateNats(await freePort());
    await n.up();
    return n;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    const child = spawn(BIN, ['-js', '-a', '127.0.0.1', '-p', String(this.port), '-sd', this.dir], { stdio: 'ignore' });
    this.child = child;
    let failed: Error | undefined;
    child.once('error', (err) => (failed = new Error(`cannot run ${BIN} (install nats-server, or set NATS_SERVER_BIN): ${err.message}`)));
    for (let i = 0; i < 100; i++) {
      if (failed) throw failed;
      if (await listening(this.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('private nats-server did not start');
  }

  async down(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
