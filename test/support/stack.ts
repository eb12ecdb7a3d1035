// Starts the real services for a system test: a database of its own (created and dropped), a NATS
// subject/stream prefix of its own, every listener on an ephemeral port, logs captured in memory.
// Services run in-process by default; spawnService() runs one as its own OS process (to kill it).
// Which processes exist, their order, port variables and who calls whom: services/processes.json.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { launch } from '../../scripts/lib/launch.mjs';
import { addressEnv, grpcAddrVar, hotPathSwitches, portVariables, processNames, processOf } from '../../scripts/lib/processes.mjs';
import pg from 'pg';
import { connect } from 'nats';
import { EnvReader } from '@partner/shared/config/env';
import { createLogger, type Logger } from '@partner/shared/telemetry/logger';
import { readAuthConfig } from '../../services/auth/src/config.js';
import { startAuth } from '../../services/auth/src/app.js';
import { readPolicyConfig } from '../../services/policy/src/config.js';
import { startPolicy } from '../../services/policy/src/app.js';
import { readSubmissionConfig } from '../../services/submission/src/config.js';
import { startSubmission } from '../../services/submission/src/app.js';
import { readJobConfig } from '../../services/job/src/config.js';
import { startJob } from '../../services/job/src/app.js';
import { readEventsConfig } from '../../services/events/src/config.js';
import { startEvents } from '../../services/events/src/app.js';
import { readDispatcherConfig } from '../../services/events/src/dispatcher/config.js';
import { startDispatcher } from '../../services/events/src/dispatcher/app.js';
import { readWorkerConfig } from '../../services/worker/src/config.js';
import { startWorker } from '../../services/worker/src/app.js';
import { readGatewayConfig } from '../../services/gateway/src/config.js';
import { startGateway } from '../../services/gateway/src/app.js';
import { checkResponse } from './conformance.js';
import { runProcess, type ProcessRun } from './run.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

export const ALL_PERMISSIONS = ['health/read', 'policies/read', 'products/read', 'submissions/read', 'submissions/write', 'jobs/read', 'events/read', 'webhooks/read', 'webhooks/write', 'quotes/read', 'quotes/write', 'requests/read'];

export interface ClientCreds {
  clientId: string;
  clientSecret: string;
  tenant: string;
  partnerId: string;
  permissions: string[];
}

interface Running {
  stop(): Promise<void>;
}

/** A service started in-process: what the stack and the tests read of it. */
interface InProcessService extends Running {
  ports: { http?: number; grpc?: number; ops: number };
  pool?: import('pg').Pool;
}

/** How a process of the registry runs in-process: its config reader, and its app started on that config. */
export interface InProcess {
  readConfig(env: EnvReader): object;
  start(env: EnvReader, logger: Logger): Promise<InProcessService>;
}
const inProcess = <C extends object>(
  readConfig: (env: EnvReader) => C,
  start: (config: C, opts: { logger: Logger }) => Promise<InProcessService>,
): InProcess => ({ readConfig, start: (env, logger) => start(readConfig(env), { logger }) });

/**
 * Each process of the registry in-process (its app imported above; the registry names which processes
 * exist and in which order they start; test/registry.test.ts checks the two agree).
 */
export const IN_PROCESS: Readonly<Record<string, InProcess>> = {
  auth: inProcess(readAuthConfig, startAuth),
  policy: inProcess(readPolicyConfig, startPolicy),
  submission: inProcess(readSubmissionConfig, startSubmission),
  job: inProcess(readJobConfig, startJob),
  events: inProcess(readEventsConfig, startEvents),
  worker: inProcess(readWorkerConfig, startWorker),
  dispatcher: inProcess(readDispatcherConfig, startDispatcher),
  gateway: inProcess(readGatewayConfig, startGateway),
};

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test responses are checked field by field
  text: string;
}

export class Stack {
  readonly logs: string[] = [];
  readonly env: Record<string, string>;
  readonly logger: Logger;
  /** Public {base_url} the gateway is configured with (statusUrl, scope); not where it listens. */
  readonly baseUrl = 'https://api.uat.test';
  readonly scope = 'api.uat.test/access';
  readonly otherScope = 'api.production.test/access';
  gatewayUrl = '';
  authUrl = '';
  gatewayOpsUrl = '';
  /** Ops listener (/livez, /readyz, /metrics) of each in-process service, by name (latest started). */
  readonly opsUrls: Record<string, string> = {};
  private readonly running: Running[] = [];
  /** In-process services by name, for tests that look inside (e.g. count pool checkouts). */
  readonly services: Record<string, { pool?: import('pg').Pool; stop(): Promise<void> }> = {};
  private readonly children = new Set<ChildProcess>();
  /** The latest process spawned for each service name. */
  readonly childServices: Record<string, ChildService> = {};
  private readonly live: { name: string; service: ChildService }[] = [];

  /** Spawned processes of a service that have not exited. */
  liveChildren(name: string): ChildService[] {
    return this.live.filter((c) => c.name === name && c.service.alive()).map((c) => c.service);
  }

  private constructor(
    readonly dbName: string,
    readonly prefix: string,
    /** The server's admin database (PG_ADMIN_URL, or a private server's: test/support/private-postgres.ts). */
    readonly pgAdminUrl: string = PG_ADMIN_URL,
  ) {
    const database = new URL(pgAdminUrl);
    database.pathname = `/${dbName}`;
    this.env = {
      DATABASE_URL: database.toString(),
      NATS_URL,
      NATS_PREFIX: prefix,
      AUTH_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      AUTH_ISSUER: 'https://auth.uat.test',
      AUTH_AUDIENCE: 'partner-submission-api',
      AUTH_SCOPES: `${this.scope},${this.otherScope}`,
      BASE_URL: this.baseUrl,
      ENVIRONMENT: 'uat',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
      // Every listener of every process (the registry's portEnv: PORT, OPS_PORT, AUTH_GRPC_PORT, …).
      ...Object.fromEntries(portVariables().map((v) => [v, '0'])),
      // Small pools: two test files run at once, each with several services, under PostgreSQL's
      // default max_connections of 100.
      DB_POOL_MAX: '4',
      // Tests that are not about rate limits must not hit them (test/limits.test.ts sets its own).
      RATE_LIMIT_RPS: '100000',
      RATE_LIMIT_BURST: '100000',
      // Webhook receivers in tests listen on loopback (test/webhooks.test.ts turns this off to test the refusals).
      WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true',
      // The hot paths' off-switches pass from the test process to every service, in-process or
      // spawned: .ci/run runs the system suite once more with GRPC_CALL_STREAMS=false DB_BATCH_MAX_SIZE=1.
      ...hotPathSwitches(),
    };
    this.logger = createLogger('test', 'debug', { write: (line: string) => void this.logs.push(line) });
  }

  /** A stack with its own database on the shared server, or on the server of `pgAdminUrl`. */
  static async create(opts: { pgAdminUrl?: string } = {}): Promise<Stack> {
    const id = randomBytes(5).toString('hex');
    const stack = new Stack(`partner_t_${id}`, `t_${id}`, opts.pgAdminUrl);
    const admin = new pg.Client({ connectionString: stack.pgAdminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${stack.dbName}`);
    await admin.end();
    return stack;
  }

  private serviceLogger(service: string): Logger {
    return this.logger.child({ service });
  }

  /**
   * Starts one process of the registry in-process. Once it listens, its gRPC address goes into env
   * (<NAME>_GRPC_ADDR) for the processes that call it (the registry's `calls`), which start after it.
   * A service it calls that the test has not started gets an address where nothing listens (the
   * discard port), never the fixed port of an `npm start` running on the same machine.
   */
  async startProcess(name: string, overrides: Record<string, string> = {}): Promise<InProcessService> {
    const run = IN_PROCESS[name];
    if (!run) throw new Error(`${name} has no in-process start in test/support/stack.ts (processes: ${processNames().join(', ')})`);
    const env: Record<string, string> = { ...this.env, ...overrides };
    for (const callee of processOf(name).calls) env[grpcAddrVar(callee)] ??= '127.0.0.1:9';
    const svc = await run.start(new EnvReader(env), this.serviceLogger(name));
    this.running.push(svc);
    this.services[name] = svc;
    this.opsUrls[name] = `http://127.0.0.1:${svc.ports.ops}`;
    Object.assign(this.env, addressEnv(name, svc.ports));
    if (name === 'auth') {
      this.authUrl = `http://127.0.0.1:${svc.ports.http}`;
      this.env.AUTH_JWKS_URL = `${this.authUrl}/.well-known/jwks.json`;
    }
    if (name === 'gateway') {
      this.gatewayUrl = `http://127.0.0.1:${svc.ports.http}`;
      this.gatewayOpsUrl = `http://127.0.0.1:${svc.ports.ops}`;
    }
    return svc;
  }

  startAuth(overrides?: Record<string, string>) {
    return this.startProcess('auth', overrides);
  }
  startPolicy(overrides?: Record<string, string>) {
    return this.startProcess('policy', overrides);
  }
  startSubmission(overrides?: Record<string, string>) {
    return this.startProcess('submission', overrides);
  }
  startJob(overrides?: Record<string, string>) {
    return this.startProcess('job', overrides);
  }
  startEvents(overrides?: Record<string, string>) {
    return this.startProcess('events', overrides);
  }
  /** A webhook dispatcher in-process (the events package's second entry point). */
  startDispatcher(overrides?: Record<string, string>) {
    return this.startProcess('dispatcher', overrides);
  }
  startWorker(overrides?: Record<string, string>) {
    return this.startProcess('worker', overrides);
  }
  startGateway(overrides?: Record<string, string>) {
    return this.startProcess('gateway', overrides);
  }

  /**
   * Every process in-process, in the registry's order; opts leaves one out by name ({ worker: false }
   * when a test runs its own). The webhook dispatcher polls the database, so it runs only when asked
   * for ({ dispatcher: true }).
   */
  async startAll(overrides: Record<string, string> = {}, opts: { worker?: boolean; events?: boolean; dispatcher?: boolean } = {}): Promise<void> {
    const wanted = (name: string) => (opts as Record<string, boolean | undefined>)[name] ?? name !== 'dispatcher';
    for (const name of processNames()) if (wanted(name)) await this.startProcess(name, overrides);
  }

  /**
   * Runs a service as its own OS process (scripts/lib/launch.mjs: node services/<name>/dist/main.js,
   * built by vitest's globalSetup) and resolves once it has announced its ports.
   */
  async spawnService(name: string, overrides: Record<string, string> = {}): Promise<ChildService> {
    const proc = launch({ name, env: { ...process.env, ...this.env, ...overrides }, onLine: (line: string) => void this.logs.push(line) });
    this.children.add(proc.child);
    void proc.exited.then(() => this.children.delete(proc.child));
    const ports = await proc.announced;
    const service: ChildService = {
      pid: proc.pid!,
      ports,
      exited: proc.exited.then((code) => (typeof code === 'number' ? code : null)),
      kill: (signal = 'SIGKILL') => proc.kill(signal),
      alive: () => proc.alive,
    };
    this.childServices[name] = service;
    this.live.push({ name, service });
    return service;
  }

  /** A query against the test database (schema-qualify table names: job.jobs, submission.submissions). */
  async sql<T extends object = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    const c = new pg.Client({ connectionString: this.env.DATABASE_URL });
    await c.connect();
    try {
      return (await c.query<T>(text, params)).rows;
    } finally {
      await c.end();
    }
  }

  /** Runs the admin CLI as an operator would; resolves with its JSON output. */
  async admin(...args: string[]): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const { code, stdout, stderr } = await this.adminRaw(...args);
    if (code !== 0) throw new Error(`admin ${args.join(' ')} exited ${code}: ${stderr}`);
    return JSON.parse(stdout);
  }

  adminRaw(...args: string[]): Promise<ProcessRun> {
    return runProcess(process.execPath, [`${ROOT}scripts/admin.mjs`, ...args], { env: { ...process.env, ...this.env } });
  }

  async createClient(opts: { permissions?: string[]; tenant?: string; partner?: string } = {}): Promise<ClientCreds> {
    const tenant = opts.tenant ?? `tenant-${randomBytes(3).toString('hex')}`;
    const partner = opts.partner ?? `partner-${randomBytes(3).toString('hex')}`;
    return this.admin(
      'client',
      'create',
      '--tenant',
      tenant,
      '--partner',
      partner,
      '--permissions',
      (opts.permissions ?? ALL_PERMISSIONS).join(','),
    );
  }

  /** Raw token request: full control over headers and body. */
  tokenRequest(init: { headers?: Record<string, string>; body?: string; method?: string }): Promise<Response> {
    return fetch(`${this.authUrl}/oauth2/token`, {
      method: init.method ?? 'POST',
      headers: init.headers ?? {},
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
  }

  async token(creds: Pick<ClientCreds, 'clientId' | 'clientSecret'>, scope = this.scope): Promise<string> {
    const res = await this.tokenRequest({
      headers: {
        authorization: basic(creds.clientId, creds.clientSecret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
    });
    const body = (await res.json()) as { access_token?: string };
    if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
    return body.access_token;
  }

  /** Calls the gateway. `json` is sent as application/json; `body` is sent as is. */
  async api(
    method: string,
    path: string,
    opts: { token?: string; headers?: Record<string, string>; json?: unknown; body?: BodyInit; base?: string } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(opts.json);
    }
    const res = await fetch(`${opts.base ?? this.gatewayUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const out = { status: res.status, headers: res.headers, body: parsed, text };
    // Every response a system test receives must be one the OpenAPI document describes.
    checkResponse(method, path, out);
    return out;
  }

  async stop(): Promise<void> {
    for (const child of this.children) child.kill('SIGKILL');
    for (const r of this.running.reverse()) await r.stop().catch(() => undefined);
    const nc = await connect({ servers: NATS_URL }).catch(() => undefined);
    if (nc) {
      const jsm = await nc.jetstreamManager().catch(() => undefined);
      if (jsm) {
        for await (const s of jsm.streams.list()) {
          if (s.config.name.startsWith(`${this.prefix}_`)) await jsm.streams.delete(s.config.name).catch(() => undefined);
        }
      }
      await nc.close();
    }
    const admin = new pg.Client({ connectionString: this.pgAdminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`);
    await admin.end();
  }
}

export interface ChildService {
  pid: number;
  ports: Record<string, number>;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
  alive(): boolean;
}

export function basic(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}
