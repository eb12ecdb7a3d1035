// Starting a service as its own process, the one way `npm start`, the test stack and the bench do it:
// `node <its entry point>` (package + entry in services/processes.json; or any command, e.g. the
// image smoke test's `buildah run`), its stdout followed line by line. A service announces itself
// ready with one JSON log line {"ready":true,"ports":{…}} (services/shared/src/process/run.ts
// announceReady); `announced` resolves with those ports, or rejects when the process exits first.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { entryOf } from './processes.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The entry point of a service relative to the repository (or the image's workdir), from the registry: e.g. services/events/dist/dispatcher.js. */
export const serviceEntry = (name) => entryOf(name);

/** The entry point of a service as an absolute path. */
export const serviceScript = (name) => `${ROOT}${serviceEntry(name)}`;

export class ServiceProcess {
  /**
   * @param {string} name
   * @param {import('node:child_process').ChildProcess} child
   * @param {{ onLine?: (line: string) => void, onStderr?: (text: string) => void }} [hooks]
   */
  constructor(name, child, hooks = {}) {
    this.name = name;
    this.child = child;
    /** The last 40 lines of its output, for a failure's message. */
    this.tail = [];
    /** Its first 20 error lines: a run that provokes an internal error has found a bug. */
    this.errors = [];
    this.stderr = '';
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
    let announce;
    this.announced = new Promise((resolve, reject) => {
      announce = resolve;
      void this.exited.then((code) => reject(new Error(`${name} exited ${code} before it was ready: ${this.stderr || this.tail.join('\n  ')}`)));
    });
    // Handled when nobody waits for it (the bench waits on /readyz instead).
    this.announced.catch(() => undefined);
    const keep = (line) => {
      this.tail.push(line);
      if (this.tail.length > 40) this.tail.splice(0, this.tail.length - 40);
      if (this.errors.length < 20 && /"level":"(error|fatal)"|^\s*(Error|TypeError|RangeError)\b/.test(line)) this.errors.push(line.slice(0, 2000));
    };
    let buf = '';
    child.stdout?.on('data', (d) => {
      buf += d.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.trim()) continue;
        keep(line);
        hooks.onLine?.(line);
        if (line.includes('"ready":true')) {
          try {
            announce(JSON.parse(line).ports ?? {});
          } catch {
            // Not the announcement (a log line quoting it).
          }
        }
      }
    });
    child.stderr?.on('data', (d) => {
      const text = d.toString();
      this.stderr += text;
      for (const line of text.split('\n')) if (line.trim()) keep(line);
      hooks.onStderr?.(text);
    });
  }

  get pid() {
    return this.child.pid;
  }

  get alive() {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  kill(signal = 'SIGKILL') {
    this.child.kill(signal);
  }

  /** SIGTERM (the services drain and exit 0), SIGKILL after graceMs; resolves once it has exited. */
  async stop(graceMs = 15_000) {
    if (!this.alive) return { killed: false };
    const t = setTimeout(() => {
      this.killed = true;
      this.child.kill('SIGKILL');
    }, graceMs);
    this.child.kill('SIGTERM');
    await this.exited;
    clearTimeout(t);
    return { killed: !!this.killed };
  }
}

/**
 * Starts a service (by default `node [nodeArgs] <its entry point> [args]`) with exactly
 * `env`, stdin closed, stdout and stderr piped (stdout: 'inherit' leaves it to the parent).
 * @param {{ name: string, env: Record<string, string | undefined>, command?: string, args?: string[], nodeArgs?: string[], stdout?: 'pipe' | 'inherit', cwd?: string, detached?: boolean, onLine?: (line: string) => void, onStderr?: (text: string) => void }} opts
 */
export function launch({ name, env, command, args, nodeArgs = [], stdout = 'pipe', cwd = ROOT, detached = false, onLine, onStderr }) {
  const child = spawn(command ?? process.execPath, command ? (args ?? []) : [...nodeArgs, serviceScript(name), ...(args ?? [])], {
    cwd,
    env,
    detached,
    stdio: ['ignore', stdout, 'pipe'],
  });
  return new ServiceProcess(name, child, { onLine, onStderr });
}
