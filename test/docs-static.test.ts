// Docs that run as written, checked without a stack (issue 35): every TypeScript snippet of README.md
// and docs/ type-checks against the built SDK (one tsc run over all of them, strict, nodenext), every
// shell block of every document uses only tools a machine set up by .ci/run has (no uuidgen), the
// documents name the API's and the token server's addresses one way ($BASE_URL, $AUTH_URL), and every
// relative link — to a file, and to a heading's anchor — resolves. The runnable blocks themselves run
// in test/docs.test.ts.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ciTools, declaredTools, headingAnchors, markdownFiles, relativeLinks, shellBlocks, shellCommands, shellVariables, tsSnippets } from './support/doc-check.js';
import { ROOT } from './support/stack.js';

const docs = markdownFiles(ROOT);
/** The documents whose TypeScript snippets must compile: the README and docs/. */
const snippetDocs = docs.filter((f) => f === 'README.md' || f.startsWith('docs/'));
/**
 * Tools a skipped block may use beyond .ci/run's: its section says what to install (a cluster, Tilt,
 * the partner CLI from its tarball). A document whose runnable blocks need more names them in a hidden
 * `<!-- docs-test: tools kubectl helm -->` line.
 */
const DEPLOYMENT_TOOLS = ['helm', 'kubectl', 'kind', 'tilt', 'docker', 'partner'];

describe('docs: the helpers read what they should', () => {
  it('finds the commands of a shell block, inside substitutions and quotes, and nothing else', () => {
    const code = [
      'KEY=$(node -e \'console.log(crypto.randomUUID())\')   # a comment: uuidgen',
      'curl -s -X POST "$BASE_URL/v1/x" -H "Idempotency-Key: $(uuidgen)" -d \'{"a": "b; rm -rf"}\' 2>&1 | tee out.txt > /dev/null',
      'for f in a b c; do echo "$f"; done',
      'while :; do PAGE=$(curl -s x) && break; done',
      'echo "$(jq -r .id < body.json)" `date`',
      'case $(jq -r .status job.json) in succeeded|failed) break ;; *) sleep 1 ;; esac',
      'partner attachments list <submissionId>',
      'partner jobs wait <jobId>',
      'cat <<EOF | node -',
      'not a command here',
      'EOF',
    ].join('\n');
    expect(shellCommands(code)).toEqual(['node', 'curl', 'uuidgen', 'tee', 'echo', ':', 'curl', 'break', 'echo', 'jq', 'date', 'jq', 'break', 'sleep', 'partner', 'partner', 'cat', 'node']);
    expect([...shellVariables('X=1 curl "$BASE/v1" ${AUTH_URL}')].sort()).toEqual(['AUTH_URL', 'BASE', 'X']);
  });

  it('reads .ci/run: what it checks for and installs', () => {
    const tools = ciTools(readFileSync(join(ROOT, '.ci/run'), 'utf8'));
    for (const t of ['curl', 'jq', 'python3', 'psql', 'node', 'sha256sum']) expect(tools.has(t), t).toBe(true);
    expect(tools.has('uuidgen')).toBe(false);
  });
});

describe('docs: every TypeScript snippet type-checks against the built SDK', () => {
  // Under the repository (git-ignored .local/), so @partner/sdk resolves to the workspace's build.
  mkdirSync(join(ROOT, '.local'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.local/doc-snippets-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles all of them in one strict tsc run (module nodenext)', async () => {
    const files = new Map<string, string>();
    for (const doc of snippetDocs) {
      for (const s of tsSnippets(join(ROOT, doc))) {
        const name = `${doc.replace(/[/.]/g, '_')}_${s.line}.mts`;
        // A module of its own (top-level await; no name clashes between snippets).
        writeFileSync(join(dir, name), `${s.declarations ? `${s.declarations}\n` : ''}${s.code}\nexport {};\n`);
        files.set(name, `${doc}:${s.line}`);
      }
    }
    expect(files.size).toBeGreaterThanOrEqual(4);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2023', 'dom'], types: ['node'], noEmit: true, skipLibCheck: true },
        include: ['*.mts'],
      }),
    );
    const tsc = await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['-p', dir], { cwd: dir }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    // Each error names the document and the snippet's fence line.
    const named = tsc.replace(/^(\S+\.mts)\((\d+),\d+\)/gm, (_, f: string, l: string) => `${files.get(f) ?? f} (snippet line ${l})`);
    expect(named).toBe('');
  });
});

describe('docs: shell blocks use only what .ci/run installs, and one name per address', () => {
  const tools = ciTools(readFileSync(join(ROOT, '.ci/run'), 'utf8'));

  it('every block of every document', () => {
    const problems: string[] = [];
    for (const doc of docs) {
      const extra = declaredTools(join(ROOT, doc));
      for (const b of shellBlocks(join(ROOT, doc))) {
        for (const cmd of shellCommands(b.code)) {
          const ok = tools.has(cmd) || /^(\.{0,2}\/|\$)/.test(cmd) || extra.includes(cmd) || (b.skipped && DEPLOYMENT_TOOLS.includes(cmd));
          if (!ok) problems.push(`${doc}:${b.line}: ${cmd} is not on a machine set up by .ci/run`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('the API is $BASE_URL and the token server $AUTH_URL everywhere (never $BASE, $API, $AUTH)', () => {
    const problems: string[] = [];
    for (const doc of docs) {
      for (const b of shellBlocks(join(ROOT, doc))) {
        for (const name of shellVariables(b.code)) {
          if (/^(BASE|API|GATEWAY)(_?URL|_BASE)?$/.test(name) && name !== 'BASE_URL') problems.push(`${doc}:${b.line}: $${name} (use $BASE_URL)`);
          if (/^(AUTH|AUTHURL|AUTH_BASE|TOKEN_URL|TOKENURL)$/.test(name)) problems.push(`${doc}:${b.line}: $${name} (use $AUTH_URL)`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('docs: links', () => {
  it('every relative link resolves: the file exists, and the heading its #anchor names', () => {
    const problems: string[] = [];
    let anchored = 0;
    for (const doc of docs) {
      for (const { line, target } of relativeLinks(join(ROOT, doc))) {
        const [path, anchor] = target.split('#', 2) as [string, string | undefined];
        const file = path ? resolve(dirname(join(ROOT, doc)), decodeURIComponent(path)) : join(ROOT, doc);
        if (!existsSync(file)) {
          problems.push(`${doc}:${line}: ${target}: no file ${relative(ROOT, file)}`);
          continue;
        }
        if (anchor === undefined || !file.endsWith('.md') || statSync(file).isDirectory()) continue;
        anchored++;
        if (!headingAnchors(file).has(anchor)) problems.push(`${doc}:${line}: ${target}: no heading #${anchor} in ${relative(ROOT, file)}`);
      }
    }
    expect(problems).toEqual([]);
    expect(anchored).toBeGreaterThan(10);
  });
});

