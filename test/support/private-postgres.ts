// A private PostgreSQL server (initdb + pg_ctl, on an ephemeral port, its data and socket in a temp
// dir) for tests that stop and restart the database: the machine's shared server must never be
// disturbed by a test. PostgreSQL refuses to run as root: when the tests run as root, every
// initdb/pg_ctl command runs as the `postgres` system user (PRIVATE_PG_USER to choose another) through
// runuser, and the temp dir is handed to that user. The binaries: PG_BIN_DIR, else PATH.
import { spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { freePort } from './poll.js';

const bin = (name: string) => (process.env.PG_BIN_DIR ? join(process.env.PG_BIN_DIR, name) : name);
const asRoot = process.getuid?.() === 0;
const USER = process.env.PRIVATE_PG_USER ?? 'postgres';

/** Runs a PostgreSQL command (as USER when root), resolving with its output; rejects with it on failure. */
function run(cmd: string, args: string[]): Promise<string> {
  const [file, argv] = asRoot ? ['runuser', ['-u', USER, '--', bin(cmd), ...args]] : [bin(cmd), args];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', (err) => reject(new Error(`cannot run ${cmd} (PostgreSQL's binaries on PATH or PG_BIN_DIR): ${err.message}`)));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${out}`))));
  });
}

export class PrivatePostgres {
  private readonly dir: string;
  private running = false;

  private constructor(readonly port: number) {
    this.dir = mkdtempSync(join(tmpdir(), 'pg-test-'));
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', USER]).toString().trim());
      const gid = Number(execFileSync('id', ['-g', USER]).toString().trim());
      chownSync(this.dir, uid, gid);
    }
  }

  /** initdb (trust auth, superuser postgres, no fsync: a test's data need not survive a crash) and start. */
  static async start(): Promise<PrivatePostgres> {
    const p = new PrivatePostgres(await freePort());
    await run('initdb', ['-D', p.data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    await p.up();
    return p;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  /** The URL of a database on this server (the admin database by default). */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server and waits until it accepts connections. */
  async up(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=100',
    ].join(' ');
    await run('pg_ctl', ['-D', this.data, '-l', join(this.dir, 'log'), '-o', options, '-w', '-t', '30', 'start']);
    this.running = true;
  }

  /**
   * Stops the server as a failover or a fast restart does (`-m fast`: sessions are terminated with
   * 57P01 admin_shutdown, new connections refused) and waits until it is down.
   */
  async down(): Promise<void> {
    if (!this.running) return;
    await run('pg_ctl', ['-D', this.data, '-m', 'fast', '-w', '-t', '30', 'stop']);
    this.running = false;
  }

  /** Stops it (immediate) and removes its files. */
  async destroy(): Promise<void> {
    if (this.running) await run('pg_ctl', ['-D', this.data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    this.running = false;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
