#!/usr/bin/env node
// Writes docs/configuration.md, the table of every environment variable the processes read. Each
// process of the registry (services/processes.json) builds its configuration with an EnvReader that
// records what it asks for (type, default, range, doc), over an empty environment: what the table
// shows is what the code declares, not what someone remembered to write down. test/configuration.test.ts
// fails when the file is stale or when code reads a variable the table lacks.
//
//   node scripts/gen-settings.mjs           rewrite docs/configuration.md (after `npm run build`)
//   node scripts/gen-settings.mjs --check   exit 1 when it is stale
//
// A process's config reader is the one `read…Config` export of the config module beside its entry
// point: dist/main.js → dist/config.js, dist/<name>.js → dist/<name>/config.js.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError, EnvReader } from '@partner/shared/config/env';
import { readTelemetry } from '@partner/shared/telemetry/bootstrap';
import { PROCESSES } from './lib/processes.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SETTINGS_FILE = join(ROOT, 'docs/configuration.md');

/** The processes of the registry, in its order: name, package directory, config module. */
export function processes() {
  return Object.entries(PROCESSES).map(([name, p]) => {
    const entry = basename(p.entry, '.js');
    const config = join(dirname(p.entry), entry === 'main' ? '' : entry, 'config.js');
    return { name, package: p.package, config: join(ROOT, p.package, config) };
  });
}

/** Every read of every process: Map<variable, Map<process, SettingRead>>, in the order first read. */
export async function collectSettings() {
  const reads = new Map();
  for (const proc of processes()) {
    const mod = await import(pathToFileURL(proc.config).href);
    const readers = Object.entries(mod).filter(([k, v]) => /^read\w*Config$/.test(k) && typeof v === 'function');
    if (readers.length !== 1) throw new Error(`${proc.config}: expected one read…Config export, found ${readers.map(([k]) => k).join(', ') || 'none'}`);
    for (const [name, read] of readAll(readers[0][1])) {
      if (!reads.has(name)) reads.set(name, new Map());
      reads.get(name).set(proc.name, read);
    }
  }
  return reads;
}

/**
 * The reads of one config reader over an empty environment. A required variable left unset may break
 * the reader past its check (it gets undefined), so each one it asked for gets a stand-in value and
 * the reader runs again; the ConfigError of invalid stand-ins is expected.
 */
function readAll(readConfig) {
  const standIns = {};
  for (;;) {
    const reads = new Map();
    const env = new EnvReader(standIns, (read) => reads.has(read.name) || reads.set(read.name, read));
    readTelemetry(env); // every main.ts starts telemetry first
    let failure;
    try {
      readConfig(env);
    } catch (err) {
      if (!(err instanceof ConfigError)) failure = err;
    }
    const missing = [...reads.values()].filter((r) => r.required && !(r.name in standIns));
    if (!failure) return reads;
    if (missing.length === 0) throw failure;
    for (const r of missing) standIns[r.name] = 'x';
  }
}

const code = (v) => `\`${v}\``;
const fmtNumber = (n) => (Number.isFinite(n) ? String(n) : n === undefined ? '' : String(n));

function defaultOf(r) {
  if (r.default === undefined) return r.required ? '**required**' : 'unset';
  if (Array.isArray(r.default)) return r.default.length ? code(r.default.join(',')) : 'unset';
  return code(String(r.default));
}

function valuesOf(r) {
  const parts = [];
  if (r.type === 'integer' && (r.min !== undefined || r.max !== undefined)) parts.push(`${fmtNumber(r.min) || '−∞'}..${fmtNumber(r.max) || '∞'}`);
  if (r.type === 'integer' && r.min === undefined && r.max === undefined) parts.push('an integer');
  if (r.type === 'boolean') parts.push('`true`, `false`');
  if (r.type === 'one of') parts.push(r.values.map(code).join(', '));
  if (r.type === 'URL') parts.push(r.protocols ? `a URL (${r.protocols.map((p) => p.replace(/:$/, '')).join(', ')})` : 'a URL');
  if (r.type === 'list') parts.push('a comma list');
  if (r.range) parts.push(r.range);
  return parts.join('; ');
}

/** One cell from per-process values: the value when all agree, else `process: value` for each. */
function merged(perProcess, fn) {
  const values = [...perProcess].map(([proc, r]) => [proc, fn(r)]);
  const distinct = [...new Set(values.map(([, v]) => v))];
  if (distinct.length === 1) return distinct[0];
  return values.map(([proc, v]) => `${proc}: ${v}`).join('; ');
}

/** The markdown of docs/configuration.md. */
export async function renderSettings() {
  const reads = await collectSettings();
  const all = processes().map((p) => p.name);
  const order = (procs) => (procs.length === all.length ? 0 : procs.length > 1 ? 1 : 2 + all.indexOf(procs[0]));
  const rows = [...reads].filter(([, per]) => ![...per.values()][0].renamedTo);
  const renamed = [...reads].filter(([, per]) => [...per.values()][0].renamedTo);
  rows.sort(([, a], [, b]) => order([...a.keys()]) - order([...b.keys()]));
  // Table cells: pipes escaped, and `<…>` outside code spans, which markdown would take for HTML.
  const esc = (s) =>
    s
      .replace(/\|/g, '\\|')
      .split('`')
      .map((part, i) => (i % 2 ? part : part.replace(/</g, '\\<')))
      .join('`');
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated by scripts/gen-settings.mjs from the config readers of the processes in services/processes.json; do not edit by hand: run `node scripts/gen-settings.mjs` after `npm run build` (test/configuration.test.ts fails when this file is stale, or when code reads a variable it lacks). -->',
    '',
    'Every process reads its settings from environment variables, through one `EnvReader`',
    '(`services/shared/src/config/env.ts`), validated at start: a bad value stops the process with a message',
    'naming the variable. Defaults are the local ones (`npm start`); the chart sets the deployed ones.',
    '`npm run admin` reads the database, NATS and key settings of the service it administers.',
    '',
    `${reads.size - renamed.length} settings: first those every process reads, then those several read, then each process's own.`,
    '',
    '| variable | read by | default | values | meaning |',
    '|---|---|---|---|---|',
  ];
  for (const [name, per] of rows) {
    const procs = [...per.keys()];
    const by = procs.length === all.length ? 'every process' : procs.join(', ');
    const doc = merged(per, (r) => r.doc ?? '');
    lines.push(`| ${code(name)} | ${by} | ${esc(merged(per, defaultOf))} | ${esc(merged(per, valuesOf))} | ${esc(doc)} |`);
  }
  lines.push(
    '',
    'The OpenTelemetry SDK also reads the other standard `OTEL_*` variables (protocol, headers, sampler,',
    'resource attributes, propagators) once tracing is on: [operations.md](operations.md#traces).',
  );
  if (renamed.length) {
    lines.push('', '## No longer read', '', 'Setting one of these fails the start, naming the variable that replaced it.', '', '| variable | read by | set instead | why |', '|---|---|---|---|');
    for (const [name, per] of renamed) {
      const r = [...per.values()][0];
      lines.push(`| ${code(name)} | ${[...per.keys()].join(', ')} | ${code(r.renamedTo)} | ${esc(r.doc ?? '')} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = await renderSettings();
  if (process.argv.includes('--check')) {
    const stale = readFileSync(SETTINGS_FILE, 'utf8') !== text;
    if (stale) console.error('docs/configuration.md is stale: run node scripts/gen-settings.mjs');
    process.exitCode = stale ? 1 : 0;
  } else {
    writeFileSync(SETTINGS_FILE, text);
    console.log(`wrote ${SETTINGS_FILE}`);
  }
}
