// What the CLI prints: JSON (with --json, or whenever stdout is not a terminal, so scripts can rely
// on it) or tables for people; and on a terminal, progress on stderr (upload bar, wait spinner)
// that disappears when done. Piped, progress is silent.

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => void };
  env: NodeJS.ProcessEnv;
}

type Row = Record<string, unknown>;

const text = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

export class Output {
  constructor(
    private readonly io: Io,
    readonly json: boolean,
  ) {}

  /** One value: JSON, or `key  value` lines. */
  record(value: object): void {
    if (this.json) return this.writeJson(value);
    const entries = Object.entries(value as Row);
    const width = Math.max(0, ...entries.map(([k]) => k.length));
    for (const [k, v] of entries) this.io.stdout.write(`${k.padEnd(width)}  ${text(v)}\n`);
  }

  /** A list: JSON (the value given), or a table of the chosen columns. */
  table(value: object, rows: Row[], columns: [key: string, title: string][], footer?: string): void {
    if (this.json) return this.writeJson(value);
    if (rows.length === 0) {
      this.io.stdout.write('(none)\n');
    } else {
      const cells = rows.map((r) => columns.map(([k]) => text(k.split('.').reduce<unknown>((o, p) => (o as Row | undefined)?.[p], r))));
      const widths = columns.map(([, title], i) => Math.max(title.length, ...cells.map((c) => c[i]!.length)));
      const line = (cols: string[]) => `${cols.map((c, i) => (i === cols.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}\n`;
      this.io.stdout.write(line(columns.map(([, t]) => t.toUpperCase())));
      for (const c of cells) this.io.stdout.write(line(c));
    }
    if (footer) this.io.stdout.write(`${footer}\n`);
  }

  /** A titled block of text (e.g. a pretty-printed body) after a record. */
  section(title: string, body: string): void {
    this.io.stdout.write(`\n${title}:\n${body}\n`);
  }

  writeJson(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** A message for people, on stderr (never mixed into the data on stdout). */
  note(message: string): void {
    this.io.stderr.write(`${message}\n`);
  }
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** One line of progress on stderr, redrawn in place; only when stderr is a terminal. */
export class Progress {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private label = '';
  private readonly started = Date.now();
  readonly enabled: boolean;

  constructor(private readonly stderr: Io['stderr']) {
    this.enabled = stderr.isTTY === true;
  }

  /** An upload: a bar with percentage and bytes. */
  bytes(label: string, sent: number, total: number): void {
    if (!this.enabled) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const width = 24;
    const ratio = total > 0 ? Math.min(1, sent / total) : 1;
    const filled = Math.round(ratio * width);
    this.draw(`${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}%  ${formatBytes(sent)} / ${formatBytes(total)}`);
  }

  /** A wait: a spinner with the elapsed time, redrawn every 100 ms until done(). */
  spin(label: string): void {
    if (!this.enabled) return;
    this.label = label;
    this.timer ??= setInterval(() => this.drawSpinner(), 100);
    this.timer.unref?.();
    this.drawSpinner();
  }

  done(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.enabled) this.stderr.write('\r\x1b[2K');
  }

  private drawSpinner(): void {
    const elapsed = Math.round((Date.now() - this.started) / 1000);
    this.draw(`${SPINNER[this.frame++ % SPINNER.length]} ${this.label} (${elapsed} s)`);
  }

  private draw(line: string): void {
    const max = (this.stderr.columns ?? 80) - 1;
    this.stderr.write(`\r\x1b[2K${line.length > max ? line.slice(0, max) : line}`);
  }
}
