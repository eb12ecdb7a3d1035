// The docs' tables of the code's vocabularies (issue 49, 3) against the code: README.md's sandbox
// directives, list filters and event types and docs/webhooks.md's `eventTypes` are what
// scripts/gen-doc-tables.mjs writes now (run it after a change); a stale or damaged region is caught.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '@partner/shared/domain/events';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { JOB_FAILURE_CODES, SANDBOX_DIRECTIVES } from '@partner/shared/domain/sandbox';
import { beginMarker, documents, endMarker, fill, regions } from '../scripts/gen-doc-tables.mjs';
import { ROOT } from './support/stack.js';

type Region = Awaited<ReturnType<typeof regions>>[number];
let all: Region[];
beforeAll(async () => {
  all = await regions();
});

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
/** The committed text of a region. */
function committed(file: string, name: string): string {
  const text = read(file);
  const from = text.indexOf(beginMarker(name));
  const to = text.indexOf(endMarker(name));
  expect(from, `${file} has the region ${name}`).toBeGreaterThanOrEqual(0);
  return text.slice(from, to);
}

describe('the generated tables of README.md and docs/webhooks.md', () => {
  it('are what scripts/gen-doc-tables.mjs writes from the code now (run `node scripts/gen-doc-tables.mjs` after a change)', async () => {
    const docs = await documents();
    expect(docs.map((d) => d.file).sort()).toEqual(['README.md', 'docs/webhooks.md']);
    for (const d of docs) expect(d.stale, d.file).toEqual([]);
    const check = spawnSync(process.execPath, [join(ROOT, 'scripts/gen-doc-tables.mjs'), '--check'], { encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
  });

  it('name every directive, failure code, list filter value and event type the server accepts', () => {
    const sandbox = committed('README.md', 'sandbox-directives');
    for (const d of SANDBOX_DIRECTIVES) expect(sandbox).toContain(`\`sandbox:${d.key}=${d.value}\``);
    for (const c of JOB_FAILURE_CODES) expect(sandbox).toContain(`| \`${c}\` |`);
    const filters = committed('README.md', 'list-filters');
    for (const v of ['withdrawn', 'clearance', 'blocked', 'review', ...Object.values(JOB_KINDS)]) expect(filters).toContain(`\`${v}\``);
    const events = committed('README.md', 'event-types');
    const webhooks = committed('docs/webhooks.md', 'webhook-event-types');
    for (const t of EVENT_TYPES) {
      expect(events).toContain(`| \`${t}\` |`);
      expect(webhooks).toContain(`\`${t}\``);
    }
  });

  it('a stale table is caught: a row taken out, a value of the code missing, a region edited by hand', () => {
    const readme = read('README.md');
    expect(fill('README.md', readme, all).stale).toEqual([]);
    // The table as it was before issue 49: no hold row.
    const noHold = readme.replace(/^\| `sandbox:hold=.*\n/m, '');
    expect(noHold).not.toBe(readme);
    expect(fill('README.md', noHold, all).stale).toEqual(['sandbox-directives']);
    // The list filters without status=withdrawn.
    const noWithdrawn = readme.replace('One of `submitted`, `withdrawn` or `bound`.', 'One of `submitted` or `bound`.');
    expect(noWithdrawn).not.toBe(readme);
    expect(fill('README.md', noWithdrawn, all).stale).toEqual(['list-filters']);
    // The webhooks page listing fewer event types than eventTypes accepts.
    const webhooks = read('docs/webhooks.md');
    // (the last type listed taken out, whichever it is)
    const fewer = webhooks.replace(/,\s*`[a-z_.]+` \(the/, ' (the');
    expect(fewer).not.toBe(webhooks);
    const filled = fill('docs/webhooks.md', fewer, all);
    expect(filled.stale).toEqual(['webhook-event-types']);
    expect(filled.text).toBe(webhooks); // and writing puts it back
  });

  it('a missing marker is an error naming the region, not a silent pass', () => {
    const readme = read('README.md').replace(endMarker('event-types'), '');
    expect(() => fill('README.md', readme, all)).toThrow(/README\.md: the markers of the generated region event-types/);
  });

  it('--check exits 1 naming the stale region when a document is stale', () => {
    // The script reads the documents of its own checkout: check a copy of it whose README is stale.
    const copy = mkdtempSync(join(tmpdir(), 'doc-tables-'));
    try {
      cpSync(join(ROOT, 'scripts'), join(copy, 'scripts'), { recursive: true });
      cpSync(join(ROOT, 'docs/webhooks.md'), join(copy, 'docs/webhooks.md'));
      mkdirSync(join(copy, 'services/gateway'), { recursive: true });
      symlinkSync(join(ROOT, 'services/gateway/dist'), join(copy, 'services/gateway/dist'));
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
      const script = join(copy, 'scripts/gen-doc-tables.mjs');
      writeFileSync(join(copy, 'README.md'), read('README.md'));
      expect(spawnSync(process.execPath, [script, '--check']).status).toBe(0);
      writeFileSync(join(copy, 'README.md'), read('README.md').replace(/^\| `sandbox:hold=.*\n/m, ''));
      const stale = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
      expect(stale.status).toBe(1);
      expect(stale.stderr).toContain('stale generated tables: README.md (sandbox-directives); run node scripts/gen-doc-tables.mjs');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
