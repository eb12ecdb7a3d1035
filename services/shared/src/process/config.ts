// Typed environment configuration: read once, validated, frozen. Every problem is collected and
// reported together, naming the variable, so a bad deployment fails at start and says why. Every
// environment variable a service reads goes through an EnvReader: scripts/gen-settings.mjs builds each
// process's configuration with one that records the reads, and so writes docs/configuration.md.

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

interface Opt<T> {
  default?: T;
  /** What the variable is for: in the error message and in docs/configuration.md. */
  doc?: string;
  /** The values allowed, in words, where a check of the caller's own enforces them (the table shows it). */
  range?: string;
}

/** One variable as a config reader asked for it: the rows of docs/configuration.md are built from these. */
export interface SettingRead {
  name: string;
  type: 'string' | 'integer' | 'boolean' | 'one of' | 'URL' | 'list';
  required: boolean;
  default?: string | number | boolean | readonly string[];
  min?: number;
  max?: number;
  values?: readonly string[];
  protocols?: readonly string[];
  range?: string;
  doc?: string;
  /** Set for a variable that is no longer read: the one that replaced it. */
  renamedTo?: string;
}

export class EnvReader {
  private readonly problems: string[] = [];
  /** @param onRead told of every variable read, with its declared type, default, range and doc. */
  constructor(
    private readonly env: Env = process.env,
    private readonly onRead?: (read: SettingRead) => void,
  ) {}

  private raw(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  private note<T>(name: string, type: SettingRead['type'], opt: Opt<T>, more: Partial<SettingRead> = {}): void {
    this.onRead?.({
      name,
      type,
      required: opt.default === undefined,
      ...(opt.default !== undefined ? { default: opt.default as SettingRead['default'] } : {}),
      ...(opt.doc ? { doc: opt.doc } : {}),
      ...(opt.range ? { range: opt.range } : {}),
      ...more,
    });
  }

  private missing<T>(name: string, opt: Opt<T>): T {
    this.problems.push(`${name} is required${opt.doc ? ` (${opt.doc})` : ''}`);
    return undefined as T;
  }

  str(name: string, opt: Opt<string> = {}): string {
    this.note(name, 'string', opt);
    const v = this.raw(name);
    if (v !== undefined) return v;
    return opt.default !== undefined ? opt.default : this.missing(name, opt);
  }

  /** A variable that may be unset (undefined then), with no default. */
  optionalStr(name: string, opt: Omit<Opt<string>, 'default'> = {}): string | undefined {
    this.note(name, 'string', opt, { required: false });
    return this.raw(name);
  }

  int(name: string, opt: Opt<number> & { min?: number; max?: number } = {}): number {
    this.note(name, 'integer', opt, { min: opt.min, max: opt.max });
    const v = this.raw(name);
    if (v === undefined) return opt.default !== undefined ? opt.default : this.missing(name, opt);
    const n = Number(v);
    if (!Number.isInteger(n)) {
      this.problems.push(`${name} must be an integer, got "${v}"`);
      return 0;
    }
    if ((opt.min !== undefined && n < opt.min) || (opt.max !== undefined && n > opt.max)) {
      this.problems.push(`${name} must be between ${opt.min ?? '-∞'} and ${opt.max ?? '∞'}, got ${n}`);
    }
    return n;
  }

  bool(name: string, opt: Opt<boolean> = {}): boolean {
    this.note(name, 'boolean', opt);
    const v = this.raw(name);
    if (v === undefined) return opt.default !== undefined ? opt.default : this.missing(name, opt);
    if (['1', 'true', 'yes', 'on'].includes(v.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(v.toLowerCase())) return false;
    this.problems.push(`${name} must be a boolean (true/false), got "${v}"`);
    return false;
  }

  oneOf<const T extends string>(name: string, values: readonly T[], opt: Opt<T> = {}): T {
    this.note(name, 'one of', opt, { values });
    const v = this.raw(name);
    if (v === undefined) return opt.default !== undefined ? opt.default : this.missing(name, opt);
    if (!(values as readonly string[]).includes(v)) {
      this.problems.push(`${name} must be one of ${values.join(', ')}, got "${v}"`);
    }
    return v as T;
  }

  url(name: string, opt: Opt<string> & { protocols?: string[] } = {}): string {
    this.note(name, 'URL', opt, opt.protocols ? { protocols: opt.protocols } : {});
    const raw = this.raw(name);
    const v = raw ?? (opt.default !== undefined ? opt.default : this.missing(name, opt));
    if (v === undefined) return v;
    try {
      const u = new URL(v);
      if (opt.protocols && !opt.protocols.includes(u.protocol)) {
        this.problems.push(`${name} must use ${opt.protocols.join(' or ')}, got "${u.protocol}"`);
      }
    } catch {
      this.problems.push(`${name} must be a URL, got "${v}"`);
    }
    // Trailing slashes dropped with a loop (/\/+$/ is quadratic on a long run of them).
    let end = v.length;
    while (end > 0 && v[end - 1] === '/') end--;
    return v.slice(0, end);
  }

  list(name: string, opt: Opt<string[]> = {}): string[] {
    this.note(name, 'list', opt);
    const v = this.raw(name);
    if (v === undefined) return opt.default !== undefined ? opt.default : this.missing(name, opt);
    return v.split(',').map((s) => s.trim()).filter(Boolean);
  }

  /** A variable that was renamed: setting the old name fails the start, naming the new one. */
  renamed(oldName: string, newName: string, why?: string): void {
    this.onRead?.({ name: oldName, type: 'string', required: false, renamedTo: newName, ...(why ? { doc: why } : {}) });
    if (this.raw(oldName) !== undefined) {
      this.problems.push(`${oldName} is no longer read: set ${newName} instead${why ? ` (${why})` : ''}`);
    }
  }

  /** Records a problem found by a check the reader has no helper for. */
  problem(name: string, message: string): void {
    this.problems.push(`${name} ${message}`);
  }

  /** Throws a ConfigError naming every bad variable; returns the frozen config otherwise. */
  done<T extends object>(config: T): Readonly<T> {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
    return deepFreeze(config);
  }
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !ArrayBuffer.isView(o)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** Settings every process shares: logging, ops port, bind host. */
export interface BaseConfig {
  serviceName: string;
  logLevel: string;
  host: string;
  opsPort: number;
  /**
   * Shutdown budget after SIGTERM (SHUTDOWN_DRAIN_MS): in-flight HTTP transfers, gRPC calls and jobs
   * get this long to finish before they are cut; the process exits at the latest 10 s after it. The
   * chart derives it and the pod's terminationGracePeriodSeconds from one value (drainSeconds).
   */
  drainMs: number;
}

export function readBase(env: EnvReader, serviceName: string, defaultOpsPort: number): BaseConfig {
  return {
    serviceName,
    logLevel: env.oneOf('LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
      default: 'info',
      doc: 'log level of the JSON logs on stdout',
    }),
    host: env.str('HOST', { default: '127.0.0.1', doc: 'address every listener binds to (0.0.0.0 in containers)' }),
    opsPort: env.int('OPS_PORT', { default: defaultOpsPort, min: 0, max: 65535, doc: '/livez, /readyz, /dependencies, /metrics' }),
    drainMs: env.int('SHUTDOWN_DRAIN_MS', { default: 20_000, min: 0, max: 3_600_000, doc: 'after SIGTERM, in-flight transfers, gRPC calls and jobs get this long before they are cut; the process exits at most 10 s later (the chart sets it from drainSeconds)' }),
  };
}

/** Server-side limits of every statement (DB_STATEMENT_TIMEOUT_MS, DB_LOCK_TIMEOUT_MS). */
export interface DbTimeouts {
  /** A statement running longer is cancelled by PostgreSQL (SQLSTATE 57014). */
  statementMs: number;
  /** A statement waiting longer for a lock (a row, a table, an advisory lock) is cancelled (55P03). */
  lockMs: number;
}

export const DEFAULT_DB_TIMEOUTS: Readonly<DbTimeouts> = { statementMs: 15_000, lockMs: 5_000 };

export interface DbConfig {
  databaseUrl: string;
  poolMax: number;
  /** Adaptive batching of the hot writes (shared/batcher.ts): most calls per statement, 1 = off. */
  batchMaxSize: number;
  /** Adaptive batching: statements of one step running at once before calls queue into a batch. */
  batchInFlight: number;
  /** Server-side limits of every statement and lock wait (pg.ts createPool, withTx). */
  timeouts: DbTimeouts;
}

export function readDb(env: EnvReader): DbConfig {
  return {
    databaseUrl: env.url('DATABASE_URL', {
      default: 'postgres://postgres@127.0.0.1:5432/partner',
      protocols: ['postgres:', 'postgresql:'],
      doc: 'PostgreSQL; each service uses its own schema',
    }),
    poolMax: env.int('DB_POOL_MAX', { default: 10, min: 1, max: 200, doc: 'pool size per process. The hot statements are named prepared statements: behind PgBouncer, use session pooling, or transaction pooling with PgBouncer >= 1.21 and max_prepared_statements set' }),
    batchMaxSize: env.int('DB_BATCH_MAX_SIZE', { default: 64, min: 1, max: 1_000, doc: 'adaptive batching of the hot writes (SubmitJob and SettleJob in job, CreateSubmission in submission, successful webhook deliveries in dispatcher): most calls committed together in one statement; 1 turns batching off (docs/performance.md)' }),
    batchInFlight: env.int('DB_BATCH_IN_FLIGHT', { default: 2, min: 1, max: 64, doc: 'statements of one batched step (job, submission, dispatcher) running at once; a call that finds fewer runs at once and alone, calls beyond share the next statement' }),
    timeouts: {
      statementMs: env.int('DB_STATEMENT_TIMEOUT_MS', { default: DEFAULT_DB_TIMEOUTS.statementMs, min: 100, max: 600_000, doc: 'PostgreSQL cancels a statement running longer (statement_timeout, per connection and per transaction); the call answers unavailable. Migrations run without it' }),
      lockMs: env.int('DB_LOCK_TIMEOUT_MS', { default: DEFAULT_DB_TIMEOUTS.lockMs, min: 10, max: 600_000, doc: 'PostgreSQL cancels a statement waiting longer for a lock (lock_timeout)' }),
    },
  };
}

export interface NatsConfig {
  natsUrl: string;
  /** Prefix of every subject and stream name, so several deployments (or test runs) share a server. */
  natsPrefix: string;
}

export function readNats(env: EnvReader): NatsConfig {
  const natsPrefix = env.str('NATS_PREFIX', { default: 'partner', doc: 'prefix of every subject and stream, so several deployments (or test runs) share a server', range: 'letters, digits, _ and -' });
  if (!/^[A-Za-z0-9_-]+$/.test(natsPrefix)) {
    env.problem('NATS_PREFIX', `may hold only letters, digits, "_" and "-", got "${natsPrefix}"`);
  }
  return { natsUrl: env.str('NATS_URL', { default: 'nats://127.0.0.1:4222', doc: 'NATS with JetStream (comma list for a cluster)' }), natsPrefix };
}
