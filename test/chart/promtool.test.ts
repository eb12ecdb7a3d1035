// The PrometheusRule as Prometheus itself reads it: `promtool check rules` on the rendered rule file
// (expressions, durations, annotation templates) and `promtool test rules` with the unit tests of
// test/chart/alerts.promtool.yaml (each alert issue 33 added or rewrote fires on the series it is
// about and stays quiet on healthy ones). promtool is Debian's `prometheus` package (.ci/run
// installs it); without it this test fails rather than skip.
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { byKind, render, ROOT, spec, VALUE_SETS } from './helm.js';

const run = promisify(execFile);
const TESTS = `${ROOT}test/chart/alerts.promtool.yaml`;

function promtoolVersion(): string {
  try {
    return execFileSync('promtool', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split('\n')[0]!.trim();
  } catch {
    throw new Error("promtool is not installed. Install it (Debian/Ubuntu: apt-get install -y prometheus; it ships promtool) and rerun.");
  }
}

async function promtool(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

interface Rule {
  alert?: string;
  expr: string;
  annotations?: Record<string, string>;
}
let dir: string;
let groups: { name: string; rules: Rule[] }[];
beforeAll(async () => {
  promtoolVersion();
  dir = mkdtempSync(join(tmpdir(), 'partner-promtool-'));
  const objects = await render(VALUE_SETS.production!);
  groups = spec(byKind(objects, 'PrometheusRule')[0]).groups;
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('promtool', () => {
  it('checks the rendered rule file clean, and does reject a broken one', async () => {
    writeFileSync(join(dir, 'rendered.yaml'), stringify({ groups }));
    const ok = await promtool(['check', 'rules', 'rendered.yaml'], dir);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toMatch(new RegExp(`SUCCESS: ${groups.flatMap((g) => g.rules).length} rules found`));
    writeFileSync(join(dir, 'broken.yaml'), stringify({ groups: [{ name: 'x', rules: [{ alert: 'X', expr: 'sum(rate(x[5m]) >' }] }] }));
    const bad = await promtool(['check', 'rules', 'broken.yaml'], dir);
    expect(bad.code).not.toBe(0);
  });

  it('passes the rule unit tests, which cover every alert issue 33 added or rewrote', async () => {
    // Annotations (runbook links, descriptions) are checked above and in operations.test.ts; the
    // unit tests compare the alerts' labels only.
    const bare = groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _a, ...r }) => r) }));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: bare }));
    copyFileSync(TESTS, join(dir, 'alerts.promtool.yaml'));
    const r = await promtool(['test', 'rules', 'alerts.promtool.yaml'], dir);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('SUCCESS');
    const tested = new Set(
      (parse(readFileSync(TESTS, 'utf8')) as { tests: { alert_rule_test: { alertname: string }[] }[] }).tests.flatMap((t) =>
        t.alert_rule_test.map((a) => a.alertname),
      ),
    );
    const alerts = new Set(groups.flatMap((g) => g.rules.map((x) => x.alert)));
    for (const name of ['PartnerEventFeedLag', 'PartnerJobsNotSettling', 'PartnerDbPoolWaiting']) {
      expect(alerts.has(name), name).toBe(true);
      expect(tested.has(name), `${name} has a promtool unit test`).toBe(true);
    }
  });

  it('would notice an alert that does not fire: a unit test expecting the wrong labels fails', async () => {
    const tests = parse(readFileSync(TESTS, 'utf8')) as { tests: { alert_rule_test: { exp_alerts: { exp_labels: Record<string, string> }[] }[] }[] };
    tests.tests = [tests.tests[0]!];
    tests.tests[0]!.alert_rule_test.at(-1)!.exp_alerts[0]!.exp_labels.stage = 'writer_pending';
    writeFileSync(join(dir, 'wrong.promtool.yaml'), stringify(tests));
    const r = await promtool(['test', 'rules', 'wrong.promtool.yaml'], dir);
    expect(r.code, r.out).not.toBe(0);
  });
});
