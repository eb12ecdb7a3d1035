// Typed environment configuration: read once, validated, frozen. Every problem is collected and
// reported together, naming the variable, so a bad deployment fails at start and says why. Every
// environment variable a service reads goes through an EnvReader: scripts/gen-settings.mjs builds each
// process's configuration with one that records the reads, and so writes docs/configuration.md.
// The ground floor of services/shared: this folder imports nothing of the project, so every layer
// (domain, db, nats, telemetry, process) may read its settings with it.

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
