// The operations docs against what they describe: every alert of the rendered PrometheusRule has a
// runbook section in docs/operations.md (`### <alert>`, the anchor its runbook_url names) and a row in
// docs/kubernetes.md's alert table; every port of the registry (services/processes.json) appears in
// the port tables (kubernetes.md: every listener of every process; operations.md: the ops ports).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROCESSES, processNames } from '../scripts/lib/processes.mjs';
import { byKind, render, ROOT, spec, VALUE_SETS } from './chart/helm.js';

const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');

/** Markdown tables of a document: header cells and body rows (cells trimmed). */
function tables(text: string): { header: string[]; rows: string[][] }[] {
  const out: { header: string[]; rows: string[][] }[] = [];
  const lines = text.split('\n').map((l) => l.trim());
  const cells = (l: string) => l.replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i]!.startsWith('|') || !/^\|[\s:|-]+\|$/.test(lines[i + 1]!)) continue;
    const header = cells(lines[i]!);
    const rows: string[][] = [];
    let j = i + 2;
    for (; j < lines.length && lines[j]!.startsWith('|'); j++) rows.push(cells(lines[j]!));
    out.push({ header, rows });
    i = j - 1;
  }
  return out;
}

let alerts: string[];
beforeAll(async () => {
  const objects = await render(VALUE_SETS.production!);
  alerts = (spec(byKind(objects, 'PrometheusRule')[0]).groups as { rules: { alert?: string }[] }[])
    .flatMap((g) => g.rules.map((r) => r.alert))
    .filter((a): a is string => Boolean(a));
});

describe('docs/operations.md and docs/kubernetes.md against the alerts', () => {
  it('every alert has a runbook section in operations.md, and no section names an alert that does not exist', () => {
    const ops = read('docs/operations.md');
    expect(alerts.length).toBeGreaterThanOrEqual(22);
    for (const alert of alerts) expect(ops, `docs/operations.md has "### ${alert}"`).toContain(`\n### ${alert}\n`);
    const named = new Set([...ops.matchAll(/\bPartner[A-Z][A-Za-z0-9]+\b/g)].map((m) => m[0]));
    for (const name of named) expect(alerts, `docs/operations.md names ${name}`).toContain(name);
  });

  it('every alert has a row in kubernetes.md\'s alert table, and the table lists nothing else', () => {
    const table = tables(read('docs/kubernetes.md')).find((t) => t.header[0] === 'alert');
    expect(table, 'a table whose first column is "alert"').toBeDefined();
    const rows = table!.rows.map((r) => /\[(Partner[A-Za-z0-9]+)\]\(operations\.md#([a-z0-9]+)\)/.exec(r[0]!));
    for (const m of rows) expect(m, 'each row links the alert to its runbook section').not.toBeNull();
    expect(rows.map((m) => m![1]).sort()).toEqual([...alerts].sort());
    for (const m of rows) expect(m![2]).toBe(m![1]!.toLowerCase());
    const named = new Set([...read('docs/kubernetes.md').matchAll(/\bPartner[A-Z][A-Za-z0-9]+\b/g)].map((m) => m[0]));
    for (const name of named) expect(alerts, `docs/kubernetes.md names ${name}`).toContain(name);
  });
});

describe('the port tables against the registry', () => {
  it('kubernetes.md lists every listener of every process in its port table', () => {
    const table = tables(read('docs/kubernetes.md')).find((t) => t.header[0] === 'service' && t.header.some((h) => h.startsWith('ops')));
    expect(table, 'the port table of kubernetes.md').toBeDefined();
    for (const name of processNames()) {
      const row = table!.rows.find((r) => r[0]!.split(/\s/)[0] === name);
      expect(row, `a row for ${name}`).toBeDefined();
      const numbers = row!.slice(1).join(' ').match(/\b\d{4,5}\b/g) ?? [];
      for (const [role, port] of Object.entries(PROCESSES[name]!.ports)) expect(numbers, `${name} ${role} ${port}`).toContain(String(port));
    }
  });

  it('operations.md lists every ops port', () => {
    const table = tables(read('docs/operations.md')).find((t) => t.header.join(' ') === 'process ops port');
    expect(table, 'the ops port table of operations.md').toBeDefined();
    const byName = Object.fromEntries(table!.rows.map((r) => [r[0], r[1]]));
    for (const name of processNames()) expect(byName[name], name).toBe(String(PROCESSES[name]!.ports.ops));
  });

  it('reads tables the way it claims (a table without a row for a process is caught)', () => {
    const parsed = tables('text\n\n| service | ops |\n|---|---|\n| gateway | 9480 |\n\nmore');
    expect(parsed).toEqual([{ header: ['service', 'ops'], rows: [['gateway', '9480']] }]);
  });
});
