// Reading a service's /metrics in tests: the Prometheus text format parsed into samples, and sums of
// the samples whose labels include the given ones.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  text: string;
  samples: Sample[];
  /** Metric families declared with # TYPE, by name. */
  types: Record<string, string>;
  /** Sum of the samples of `name` whose labels include `labels` (0 when none). */
  sum(name: string, labels?: Record<string, string>): number;
  /** Whether any sample of `name` (with these labels) exists. */
  has(name: string, labels?: Record<string, string>): boolean;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Scrape {
  const samples: Sample[] = [];
  const types: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types[type[1]!] = type[2]!;
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const matching = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    text,
    samples,
    types,
    sum: (name, labels) => matching(name, labels).reduce((a, s) => a + s.value, 0),
    has: (name, labels) => matching(name, labels).length > 0,
  };
}

export async function scrape(opsUrl: string): Promise<Scrape> {
  const res = await fetch(`${opsUrl}/metrics`);
  if (res.status !== 200) throw new Error(`${opsUrl}/metrics answered ${res.status}`);
  return parseMetrics(await res.text());
}

/** /readyz: 200 `ok` unless draining; `dependencies` is what the process last saw of them (information only). */
export async function readyz(opsUrl: string): Promise<{ status: number; body: { status: string; dependencies?: Record<string, string> } }> {
  const res = await fetch(`${opsUrl}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; dependencies?: Record<string, string> } };
}

/** /dependencies: a fresh check of each dependency (`ok` or `failed: …`), always 200. */
export async function dependencies(opsUrl: string): Promise<{ status: number; body: { status: 'ok' | 'degraded'; dependencies: Record<string, string> } }> {
  const res = await fetch(`${opsUrl}/dependencies`);
  return { status: res.status, body: (await res.json()) as { status: 'ok' | 'degraded'; dependencies: Record<string, string> } };
}
