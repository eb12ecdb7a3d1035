// A private PostgreSQL server (initdb + pg_ctl, on an ephemeral port, its data and socket in a temp
// dir) for tests that stop and restart the database: the machine's shared server must never be
// disturbed by a test. PostgreSQL refuses to run as root: when the tests run as root, every
// initdb/pg_ctl command runs as the `postgres` system user (PRIVATE_PG_USER to choose another) through
// runuser, and the temp dir is handed to that user. The binaries: PG_BIN_DIR, else PATH.
import { spawn } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

/**
 * Settings the server runs with (`-c name=value`). By default it trades durability for speed, as a
 * test's data need not survive a crash: no fsync, every commit asynchronous, no full-page writes.
 * A test about crashes passes its own (`synchronous_commit: 'on'`, the server's default, so that
 * only the commits that ask for it are asynchronous).
 */
const FAST: Record<string, string> = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };

export class PrivatePostgres {
  private readonly dir: string;
  private running = false;
  private settings: Record<string, string> = FAST;

  private constructor(readonly port: number) {
    this.dir = mkdtempSync(join(tmpdir(), 'pg-test-'));
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', USER]).toString().trim());
      const gid = Number(execFileSync('id', ['-g', USER]).toString().trim());
      chownSync(this.dir, uid, gid);
    }
  }

  /** initdb (trust auth, superuser postgres, no fsync: a test's data need not survive a crash) and start. */
  static async start(opts: { settings?: Record<string, string> } = {}): Promise<PrivatePostgres> {
    const p = new PrivatePostgres(await freePort());
    p.settings = { ...FAST, ...opts.settings };
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
    await this.startOn(this.port);
  }

  private async startOn(port: number): Promise<void> {
    const options = [
      `-p ${port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      ...Object.entries(this.settings).map(([name, value]) => `-c ${name}=${value}`),
      '-c max_connections=100',
    ].join(' ');
    await run('pg_ctl', ['-D', this.data, '-l', join(this.dir, 'log'), '-o', options, '-w', '-t', '30', 'start']);
    this.running = true;
  }

  /**
   * Crashes the server: SIGQUIT to the postmaster, what `pg_ctl stop -m immediate` sends (sent
   * directly, so the crash lands within a millisecond of the call rather than after pg_ctl has
   * started). Every process exits at once, without a checkpoint and without writing the WAL buffers:
   * an asynchronous commit whose WAL the WAL writer had not written yet is lost, exactly as in a
   * crash (the files the server did write stay in the OS cache, so fsync=off plays no part: the
   * machine does not crash). Resolves once the postmaster has exited. The next start recovers from
   * the WAL.
   */
  async crash(): Promise<void> {
    const pid = this.postmasterPid();
    process.kill(pid, 'SIGQUIT');
    await this.crashed(pid);
  }

  /** The running postmaster's process id (for a crash sent from elsewhere: see crashed()). */
  postmasterPid(): number {
    return Number(readFileSync(join(this.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** Resolves once the postmaster `pid` has exited (after a SIGQUIT sent by crash() or by anyone). */
  async crashed(pid: number): Promise<void> {
    this.running = false;
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 30_000;
    while (alive()) {
      if (Date.now() > deadline) throw new Error(`postmaster ${pid} still running 30 s after SIGQUIT`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /**
   * Starts the server on another free port (crash recovery runs), for a look at what survived before
   * the services, which connect to `port`, can write anything; resolves with that port. Stop it
   * with down() and start it with up() to serve them again.
   */
  async upElsewhere(): Promise<number> {
    const port = await freePort();
    await this.startOn(port);
    return port;
  }

  /** The URL of a database on this server when it listens on `port` (see upElsewhere). */
  urlOn(port: number, database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${port}/${database}`;
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
