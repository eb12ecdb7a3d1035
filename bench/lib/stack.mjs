// A private copy of the system for the bench: its own PostgreSQL database (created and dropped), its
// own NATS prefix (streams deleted at the end), every process of the registry (services/processes.json)
// as its own OS process on free loopback ports (never the fixed ports of `npm start`), each told the
// addresses of the services it calls, provisioned through the admin CLI. Everything it starts is
// tracked so cleanup() can undo it, also after a failure.
import { spawnSync } from 'node:child_process';
import { launch, serviceScript } from '../../scripts/lib/launch.mjs';
import { addressEnv, processNames, processOf, startWaves } from '../../scripts/lib/processes.mjs';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connect } from 'nats';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PG_HOST = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
/**
 * Seconds between two ANALYZEs of the bench database while the stack runs (0: never). PostgreSQL here
 * runs with autovacuum off, so without them every table keeps the statistics of an empty table as it
 * grows to tens of thousands of rows, and statements are planned on those (docs/performance.md, "Issue
 * 47, third session"); a production server runs autovacuum, whose auto-analyse keeps them close. The
 * bench's own connection (application_name bench-analyze): its CPU is in no per-request figure, as
 * autovacuum's would not be.
 */
export const ANALYZE_EVERY_S = Number(process.env.BENCH_ANALYZE_S ?? '10');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** n distinct free loopback ports (all held open until every one is chosen). */
export async function freePorts(n) {
  const servers = [];
  const ports = [];
  for (let i = 0; i < n; i++) {
    const srv = createServer();
    await new Promise((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', resolve);
    });
    servers.push(srv);
    ports.push(srv.address().port);
  }
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** A spawned node process (scripts/lib/launch.mjs); its readiness here is its ops port answering /readyz. */
export { ServiceProcess as Proc } from '../../scripts/lib/launch.mjs';

export function spawnNode(name, script, { env, args = [], nodeArgs = [], stdout = 'pipe' } = {}) {
  return launch({ name, command: process.execPath, args: [...nodeArgs, script, ...args], env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdout });
}

/** Waits until url answers 200 (or the process dies, or timeoutMs passes). */
export async function waitReady(proc, url, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) {
    if (!proc.alive) throw new Error(`${proc.name} exited (${await proc.exited}) before it was ready:\n  ${proc.tail.join('\n  ')}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      last = `${res.status} ${await res.text()}`;
      if (res.ok) return;
    } catch (err) {
      last = err.message;
    }
    await sleep(100);
  }
  throw new Error(`${proc.name} not ready after ${timeoutMs} ms (${last}):\n  ${proc.tail.join('\n  ')}`);
}

/** A pg.Client, connected; retried for a while when the server is at its connection limit (53300). */
export async function connectWithRetry(connectionString, attempts = 30, applicationName = 'bench') {
  for (let i = 1; ; i++) {
    const c = new pg.Client({ connectionString, application_name: applicationName });
    try {
      await c.connect();
      return c;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (err.code !== '53300' || i >= attempts) throw err;
      await sleep(200 * Math.min(i, 5));
    }
  }
}

/** Reads VmRSS / VmHWM (bytes) of a process from /proc. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (user + system, ms) a process has used so far; NaN once it is gone. */
export function cpuTimeMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/**
 * Measures the CPU time a set of processes spends while fn runs: our own processes by pid, plus the
 * PostgreSQL backends serving the bench database whose application_name matches (sampled before
 * and after; backends that appear meanwhile count from zero).
 */
export async function cpuDuring(stack, { procs, pgApps }, fn) {
  const backends = async () =>
    (await stack.sql('SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database() AND application_name = ANY($1)', [pgApps])).map(
      (r) => ({ pid: r.pid, app: r.application_name }),
    );
  const before = new Map(Object.entries(procs).map(([k, p]) => [k, cpuTimeMs(p.pid)]));
  const pgBefore = new Map((await backends()).map((b) => [b.pid, cpuTimeMs(b.pid)]));
  const result = await fn();
  const cpu = {};
  for (const [k, p] of Object.entries(procs)) cpu[k] = cpuTimeMs(p.pid) - before.get(k);
  let pgMs = 0;
  for (const b of await backends()) {
    const now = cpuTimeMs(b.pid);
    if (Number.isFinite(now)) pgMs += now - (pgBefore.get(b.pid) ?? 0);
  }
  cpu.postgres = pgMs;
  return { result, cpuMs: cpu };
}

/**
 * The processes a submit-with-wait request passes through, whose CPU the submit rows count: every
 * process but those of the events schema (the events service and the webhook dispatcher work after
 * the answer; the event feed and webhook phases measure them).
 */
export const submitPath = () => processNames().filter((name) => processOf(name).schema !== 'events');

/** Of those, the ones with PostgreSQL backends of their own (application_name = the process). */
export const submitPathWithDatabase = () => submitPath().filter((name) => processOf(name).schema !== null);

export class BenchStack {
  constructor() {
    this.id = randomBytes(4).toString('hex');
    this.dbName = `partner_bench_${this.id}`;
    this.prefix = `bench_${this.id}`;
    this.databaseUrl = `${PG_HOST}/${this.dbName}`;
    this.natsUrl = NATS_URL;
    this.procs = new Map();
    this.extra = new Set();
    this.stoppedErrors = [];
    this.tmp = mkdtempSync(join(tmpdir(), 'partner-bench-'));
    this.dbCreated = false;
    // The public {base_url} only names the environment's scope and statusUrl; where the gateway
    // listens is a free port.
    this.baseUrl = 'http://api.bench.test';
    this.scope = 'api.bench.test/access';
    this.issuer = '';
    this.productId = randomUUID();
    this.tenant = 'bench';
    this.partnerId = 'bench-partner';
    this.principalId = 'bench-broker';
  }

  async admin(...args) {
    const r = spawnSync(process.execPath, [`${ROOT}scripts/admin.mjs`, ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: this.databaseUrl, AUTH_KEY_ENCRYPTION_KEY: this.kek, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`admin ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  }

  async pgAdmin(fn) {
    const c = await connectWithRetry(`${PG_HOST}/postgres`);
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  }

  /**
   * A query on the bench database (schema-qualified names), on one connection kept for the bench's
   * own queries: PostgreSQL's connection limit is shared with everything else on the machine.
   */
  async sql(text, params = []) {
    if (!this.sqlClient) {
      const c = await connectWithRetry(this.databaseUrl);
      c.on('error', () => undefined);
      this.sqlClient = c;
    }
    try {
      return (await this.sqlClient.query(text, params)).rows;
    } catch (err) {
      if (err.code) throw err; // a server error: the connection is fine
      this.sqlClient = undefined; // a broken connection: a fresh one next time
      throw err;
    }
  }

  async createDatabase() {
    await this.pgAdmin((c) => c.query(`CREATE DATABASE ${this.dbName}`));
    this.dbCreated = true;
  }

  /**
   * A free port for every listener of every process (the registry's ports: http, grpc, ops), and the
   * environment every service shares; each one's own port variables and the addresses of the services
   * it calls are added by startService().
   */
  async allocate() {
    const listeners = processNames().flatMap((name) => Object.keys(processOf(name).ports).map((role) => ({ name, role })));
    const free = await freePorts(listeners.length);
    /** @type {Record<string, Record<string, number>>} */
    const of = {};
    listeners.forEach(({ name, role }, i) => ((of[name] ??= {})[role] = free[i]));
    this.ports = { of, ops: Object.fromEntries(processNames().map((name) => [name, of[name].ops])) };
    this.kek = randomBytes(32).toString('base64');
    this.issuer = `http://127.0.0.1:${of.auth.http}`;
    this.env = {
      DATABASE_URL: this.databaseUrl,
      NATS_URL: this.natsUrl,
      NATS_PREFIX: this.prefix,
      BASE_URL: this.baseUrl,
      AUTH_ISSUER: this.issuer,
      AUTH_SCOPES: this.scope,
      AUTH_KEY_ENCRYPTION_KEY: this.kek,
      ENVIRONMENT: 'uat',
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      // The bench client is one client sending thousands of requests a second: the per-client
      // default limit (50/s) would turn the measurement into a measurement of the limiter.
      RATE_LIMIT_RPS: '1000000',
      RATE_LIMIT_BURST: '1000000',
      MAX_WAITERS: '20000',
      // The phases restart services between measurements and none measures a drain: a job a sandbox
      // delay still holds (the noisy phase's slow one) goes back to the stream 2 s after SIGTERM
      // instead of holding the next phase's restart for the default 20 s.
      SHUTDOWN_DRAIN_MS: '2000',
      // The bench's one partner holds thousands of waits (the waiter and feed-reader phases).
      MAX_WAITERS_PER_PARTNER: '1000000',
      // Periodic attachment sweeps would add queries of their own to the quiet window.
      ATTACHMENT_SWEEP_INTERVAL_MS: '0',
      // The webhook phases' receivers listen on loopback, with 50 endpoints for the bench's one partner.
      WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true',
      WEBHOOK_ENDPOINT_LIMIT: '64',
      // Smoke runs share PostgreSQL's 100 connections with the other test files: smaller pools.
      ...(process.env.BENCH_DB_POOL_MAX ? { DB_POOL_MAX: process.env.BENCH_DB_POOL_MAX } : {}),
      // Settings to compare, for every service: BENCH_SERVICE_ENV="DB_BATCH_MAX_SIZE=1,GRPC_CALL_STREAMS=false".
      ...Object.fromEntries(
        (process.env.BENCH_SERVICE_ENV ?? '')
          .split(',')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      ),
    };
  }

  /**
   * The variables of one process's own listeners (the registry's portEnv: PORT, AUTH_GRPC_PORT,
   * OPS_PORT, …) and the addresses of the gRPC services it calls (<NAME>_GRPC_ADDR).
   */
  processEnv(name, { opsPort } = {}) {
    const p = processOf(name);
    const ports = { ...this.ports.of[name], ...(opsPort === undefined ? {} : { ops: opsPort }) };
    return {
      ...Object.fromEntries(Object.entries(p.portEnv).map(([role, variable]) => [variable, String(ports[role])])),
      ...Object.assign({}, ...p.calls.map((callee) => addressEnv(callee, this.ports.of[callee]))),
    };
  }

  /** Starts one service (again) with optional extra env / node flags, waiting for /readyz. */
  async startService(name, { env = {}, nodeArgs = [], key = name, opsPort, stdout } = {}) {
    const proc = spawnNode(key, serviceScript(name), {
      env: { ...this.env, ...this.processEnv(name, { opsPort }), ...env },
      nodeArgs,
      stdout,
    });
    this.procs.set(key, proc);
    await waitReady(proc, `http://127.0.0.1:${opsPort ?? this.ports.ops[name]}/readyz`);
    return proc;
  }

  async stopService(key) {
    const p = this.procs.get(key);
    if (p) await p.stop();
    this.procs.delete(key);
    if (p?.errors.length) this.stoppedErrors.push(...p.errors.map((e) => `${key}: ${e}`));
  }

  /** Error lines the services have logged so far (LOG_LEVEL=warn keeps the rest quiet). */
  serviceErrors() {
    const live = [...this.procs.entries()].flatMap(([k, p]) => p.errors.map((e) => `${k}: ${e}`));
    return [...this.stoppedErrors, ...live].slice(0, 40);
  }

  /** Database, every service (wave by wave: each after those it calls, in parallel within a wave), provisioning, token. */
  async start({ nodeArgsOf = () => [], envOf = () => ({}), onStep = () => undefined, policies = 200 } = {}) {
    await this.allocate();
    await this.createDatabase();
    onStep(`database ${this.dbName}, NATS prefix ${this.prefix}`);
    const start = (s) => this.startService(s, { nodeArgs: nodeArgsOf(s), env: envOf(s) });
    for (const wave of startWaves()) await Promise.all(wave.map(start));
    onStep('services ready');
    this.client = await this.admin(
      'client', 'create', '--tenant', this.tenant, '--partner', this.partnerId, '--name', 'bench',
      '--permissions', 'health/read,policies/read,products/read,submissions/read,submissions/write,jobs/read,events/read,webhooks/read,webhooks/write,quotes/read,quotes/write',
    );
    await this.admin('principal', 'add', '--tenant', this.tenant, '--partner', this.partnerId, '--principal', this.principalId);
    await this.admin('product', 'add', '--id', this.productId, '--name', 'Bench product');
    if (policies > 0) {
      const file = join(this.tmp, 'policies.jsonl');
      const lines = [];
      for (let i = 1; i <= policies; i++) {
        lines.push(
          JSON.stringify({
            policyNumber: `BENCH-${String(i).padStart(5, '0')}`,
            status: i % 10 === 0 ? 'cancelled' : 'active',
            productId: this.productId,
            insured: { legalName: `Insured ${i} Ltd` },
            effectiveDate: '2026-01-01',
            expirationDate: '2027-01-01',
            premium: { amount: `${1000 + i}.50`, currency: 'EUR' },
          }),
        );
      }
      writeFileSync(file, `${lines.join('\n')}\n`);
      this.policyImport = await this.admin('policy', 'import', '--tenant', this.tenant, '--partner', this.partnerId, file);
    }
    this.token = await this.fetchToken();
    onStep('provisioned (client, principal, product, policies) and token issued');
    this.keepStatistics(ANALYZE_EVERY_S);
  }

  /** ANALYZE the bench database every everyS seconds until cleanup (ANALYZE_EVERY_S). */
  keepStatistics(everyS) {
    if (!(everyS > 0) || this.analyzer) return;
    let running = false;
    this.analyzer = setInterval(async () => {
      if (running) return;
      running = true;
      try {
        if (!this.analyzeClient) {
          this.analyzeClient = await connectWithRetry(this.databaseUrl, 30, 'bench-analyze');
          // Throttled as autovacuum's own ANALYZE is (autovacuum_vacuum_cost_delay 2 ms per 200 page
          // costs): spread over its interval instead of one burst of CPU that every latency phase's
          // p99 would see.
          await this.analyzeClient.query("SET vacuum_cost_delay = '2ms'; SET vacuum_cost_limit = 200");
        }
        await this.analyzeClient.query('ANALYZE');
      } catch {
        await this.analyzeClient?.end().catch(() => undefined);
        this.analyzeClient = undefined;
      } finally {
        running = false;
      }
    }, everyS * 1000);
    this.analyzer.unref();
  }

  /** DATABASE_URL of the bench database reached through a proxy on port. */
  databaseUrlVia(port) {
    return this.databaseUrl.replace(/@[^/]+\//, `@127.0.0.1:${port}/`);
  }

  /** host:port of a gRPC service, as its callers are told it (<NAME>_GRPC_ADDR). */
  grpcAddress(name) {
    return Object.values(addressEnv(name, this.ports.of[name]))[0];
  }

  get gatewayUrl() {
    return `http://127.0.0.1:${this.ports.of.gateway.http}`;
  }

  /** A token for the bench's client, or for another one (`admin client create`'s answer). */
  async fetchToken(client = this.client) {
    const res = await fetch(`${this.issuer}/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: `grant_type=client_credentials&scope=${encodeURIComponent(this.scope)}`,
    });
    const body = await res.json();
    if (!res.ok) throw new Error(`token endpoint answered ${res.status}: ${JSON.stringify(body)}`);
    return body.access_token;
  }

  /** Registers a process the stack did not start itself (baselines) for cleanup. */
  track(proc) {
    this.extra.add(proc);
    return proc;
  }

  /** Stops every process, deletes the NATS streams with the prefix, drops the database. */
  async cleanup() {
    const problems = [];
    const all = [...this.extra, ...[...this.procs.values()].reverse()];
    const started = Date.now();
    await Promise.all(
      all.map((p) =>
        p.stop(10_000).then(
          (r) => r?.killed && process.stderr.write(`note: ${p.name} did not exit within 10 s of SIGTERM and was killed\n`),
          (err) => problems.push(`${p.name}: ${err.message}`),
        ),
      ),
    );
    this.stopMs = Date.now() - started;
    this.procs.clear();
    this.extra.clear();
    try {
      const nc = await connect({ servers: this.natsUrl, timeout: 3_000 });
      try {
        const jsm = await nc.jetstreamManager();
        for await (const s of jsm.streams.list()) {
          if (s.config.name.startsWith(this.prefix)) await jsm.streams.delete(s.config.name);
        }
      } finally {
        await nc.close();
      }
    } catch (err) {
      problems.push(`NATS streams: ${err.message}`);
    }
    clearInterval(this.analyzer);
    this.analyzer = undefined;
    await this.analyzeClient?.end().catch(() => undefined);
    this.analyzeClient = undefined;
    await this.sqlClient?.end().catch(() => undefined);
    this.sqlClient = undefined;
    if (this.dbCreated) {
      try {
        await this.pgAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`));
        this.dbCreated = false;
      } catch (err) {
        problems.push(`database ${this.dbName}: ${err.message}`);
      }
    }
    rmSync(this.tmp, { recursive: true, force: true });
    return problems;
  }
}
