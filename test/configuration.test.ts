// The settings table (docs/configuration.md) against the code: the committed table is what
// scripts/gen-settings.mjs writes now; every variable the services' code names is a row of it; no
// service reads process.env around its EnvReader; the README and the service READMEs name only
// settings the table has, and a service README only settings its own processes read.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { collectSettings, processes, renderSettings, SETTINGS_FILE } from '../scripts/gen-settings.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Production sources of the services (tests, test helpers and generated code left out). */
function sources(dir = join(ROOT, 'services')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return ['node_modules', 'dist', 'generated', 'scripts'].includes(e.name) ? [] : sources(path);
    return /\.ts$/.test(e.name) && !/\.test(-helper)?\.ts$/.test(e.name) ? [path] : [];
  });
}

/** The variables a table row names (from the committed file, so a hand edit counts too). */
function tableRows(): Set<string> {
  const text = readFileSync(SETTINGS_FILE, 'utf8');
  return new Set([...text.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]!));
}

/** Backticked setting names in a piece of prose (`AUTH_*` and `*_GRPC_ADDR` as globs). */
const settingNames = (text: string) => [...text.matchAll(/`(\*?[A-Z][A-Z0-9]*(?:_[A-Z0-9*]+)+|[A-Z]+_\*)`/g)].map((m) => m[1]!);
const glob = (name: string) => new RegExp(`^${name.replace(/\*/g, '[A-Z0-9_]+')}$`);

describe('docs/configuration.md', () => {
  it('is what scripts/gen-settings.mjs writes from the code (run `node scripts/gen-settings.mjs` after a change)', async () => {
    expect(readFileSync(SETTINGS_FILE, 'utf8')).toBe(await renderSettings());
  });

  it('has a row for every variable the services name in their code', () => {
    const rows = tableRows();
    const reads = /\b(?:env|reader)\.(?:str|int|bool|oneOf|url|list|optionalStr|renamed)\(\s*'([A-Z][A-Z0-9_]*)'|process\.env\.([A-Z][A-Z0-9_]*)|process\.env\[\s*'([A-Z][A-Z0-9_]*)'/g;
    const missing: string[] = [];
    for (const file of sources()) {
      for (const m of readFileSync(file, 'utf8').matchAll(reads)) {
        const name = m[1] ?? m[2] ?? m[3]!;
        if (!rows.has(name)) missing.push(`${name} (${relative(ROOT, file)})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('is the only way in: no service reads process.env except through EnvReader (shared/src/config/env.ts)', () => {
    const direct = sources()
      .filter((f) => relative(ROOT, f) !== join('services', 'shared', 'src', 'config', 'env.ts'))
      .filter((f) => /process\.env\b/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(direct).toEqual([]);
  });

  it('says what each setting is for (a doc: string at every read)', async () => {
    const undocumented = [...(await collectSettings())].flatMap(([name, per]) => [...per].filter(([, r]) => !r.doc).map(([proc]) => `${name} (${proc})`));
    expect(undocumented).toEqual([]);
  });

  it('lists the webhook settings of the events service and the dispatcher', () => {
    const webhook = [...tableRows()].filter((n) => n.startsWith('WEBHOOK_'));
    expect(webhook.length).toBeGreaterThanOrEqual(11);
  });
});

describe('the READMEs name settings the table has', () => {
  it("README.md's Configuration section", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Configuration'), readme.indexOf('\n### ', readme.indexOf('### Configuration') + 1));
    const rows = [...tableRows()];
    const unknown = settingNames(section).filter((n) => !rows.some((r) => glob(n).test(r)));
    expect(settingNames(section).length).toBeGreaterThan(5);
    expect(unknown).toEqual([]);
  });

  it("each service README's Settings entry, read by that service's processes", async () => {
    const reads = await collectSettings();
    const problems: string[] = [];
    for (const dir of readdirSync(join(ROOT, 'services'), { withFileTypes: true }).filter((e) => e.isDirectory())) {
      let readme: string;
      try {
        readme = readFileSync(join(ROOT, 'services', dir.name, 'README.md'), 'utf8');
      } catch {
        continue;
      }
      const entry = readme.match(/^- \*\*Settings[^\n]*(?:\n(?!- \*\*|#)[^\n]+)*/m)?.[0] ?? '';
      const own = processes().filter((p) => p.package === `services/${dir.name}`).map((p) => p.name);
      for (const name of settingNames(entry)) {
        const readBy = [...reads].filter(([row]) => glob(name).test(row)).flatMap(([, per]) => [...per.keys()]);
        if (readBy.length === 0) problems.push(`${dir.name}: ${name} is no setting`);
        else if (own.length > 0 && !readBy.some((p) => own.includes(p))) problems.push(`${dir.name}: ${name} is read by ${[...new Set(readBy)].join(', ')} only`);
      }
    }
    expect(problems).toEqual([]);
  });
});
