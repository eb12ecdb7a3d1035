// The SDK and CLI as a partner gets them: packed with `npm pack`, installed from the tarballs into an
// empty directory (offline: the SDK's one outside dependency, jose, installed from a tarball beside
// them; the CLI's alone too, the SDK and jose bundled in it), the CLI runnable, the SDK
// importable, its types compiling in a consumer under each TypeScript module resolution (node16,
// bundler, node10), every source map pointing at a shipped file, and versions equal to the API's.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './support/stack.js';
import { NPM_ENV, packPartnerPackages, type PartnerTarballs } from './support/packages.js';
import { API_VERSION } from '../services/gateway/src/openapi/document.js';

const run = promisify(execFile);
let dir: string;
let tarballs: PartnerTarballs;

beforeAll(async () => {
  // The packages are packed from their build.
  await run(join(ROOT, 'node_modules/.bin/tsc'), ['-b', 'sdk/cli'], { cwd: ROOT });
  const packs = mkdtempSync(join(tmpdir(), 'partner-packs-'));
  tarballs = await packPartnerPackages(packs);
  dir = mkdtempSync(join(tmpdir(), 'partner-consumer-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-package-lock', '--cache', join(dir, '.npm-cache'), tarballs.sdk, tarballs.cli, tarballs.jose], { cwd: dir, env: NPM_ENV });
}, 240_000);

describe('installed from the packed tarballs', () => {
  it('ships what the packages need, and no tests', () => {
    for (const pkg of ['sdk', 'cli']) {
      const root = join(dir, 'node_modules/@partner', pkg);
      expect(existsSync(join(root, 'CHANGELOG.md')), pkg).toBe(true);
      expect(readdirSync(join(root, 'src')).filter((f) => f.endsWith('.test.ts')), pkg).toEqual([]);
    }
  });

  it('has the API version', () => {
    for (const pkg of ['sdk', 'cli']) {
      const manifest = JSON.parse(readFileSync(join(dir, 'node_modules/@partner', pkg, 'package.json'), 'utf8')) as { version: string };
      expect(manifest.version, pkg).toBe(API_VERSION);
    }
  });

  it('installs the CLI from its tarball alone, offline: the SDK is bundled in it, nothing is fetched', async () => {
    const alone = mkdtempSync(join(tmpdir(), 'partner-cli-alone-'));
    writeFileSync(join(alone, 'package.json'), JSON.stringify({ name: 'cli-alone', private: true }));
    // An empty cache of its own: had the CLI needed @partner/sdk from a registry, this would fail (ENOTCACHED).
    await run('npm', ['install', '--offline', '--no-package-lock', '--cache', join(alone, '.npm-cache'), tarballs.cli], { cwd: alone, env: NPM_ENV });
    expect(existsSync(join(alone, 'node_modules/@partner/cli/node_modules/@partner/sdk/dist/index.js'))).toBe(true);
    const { stdout } = await run(join(alone, 'node_modules/.bin/partner'), ['--version'], { cwd: alone });
    expect(stdout.trim()).toBe(`partner ${API_VERSION}`);
    // The workspace is as it was: the bundled copy existed only while packing.
    expect(existsSync(join(ROOT, 'sdk/cli/node_modules'))).toBe(false);
  });

  it('runs the CLI', async () => {
    const { stdout } = await run(join(dir, 'node_modules/.bin/partner'), ['--version'], { cwd: dir });
    expect(stdout.trim()).toBe(`partner ${API_VERSION}`);
  });

  it('imports the SDK', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', "import('@partner/sdk').then((m) => console.log(m.SDK_VERSION, typeof m.PartnerClient))"], { cwd: dir });
    expect(stdout.trim()).toBe(`${API_VERSION} function`);
  });

  it('points every source map at a shipped file', () => {
    const maps: string[] = [];
    for (const pkg of ['sdk', 'cli']) {
      const dist = join(dir, 'node_modules/@partner', pkg, 'dist');
      for (const f of readdirSync(dist).filter((n) => n.endsWith('.map'))) {
        const { sources } = JSON.parse(readFileSync(join(dist, f), 'utf8')) as { sources: string[] };
        for (const s of sources) maps.push(`${pkg}/dist/${f} → ${s}: ${existsSync(resolve(dist, s)) ? 'ok' : 'missing'}`);
      }
    }
    expect(maps.length).toBeGreaterThan(0);
    expect(maps.filter((m) => !m.endsWith('ok'))).toEqual([]);
  });

  it.each([
    ['node16', 'node16', 'module'],
    ['bundler', 'esnext', 'module'],
    ['node10', 'commonjs', 'commonjs'],
  ])('type-checks a consumer with moduleResolution %s', async (moduleResolution, module, type) => {
    const project = mkdtempSync(join(dir, `ts-${moduleResolution}-`));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ private: true, type }));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module, moduleResolution, lib: ['ES2023', 'DOM'], types: [], skipLibCheck: false, ignoreDeprecations: '5.0' },
        files: ['consumer.ts'],
      }),
    );
    writeFileSync(
      join(project, 'consumer.ts'),
      [
        "import { PartnerClient, PartnerNotFoundError, type ErrorCode, type SubmissionCreate } from '@partner/sdk';",
        "const client = new PartnerClient({ baseUrl: 'https://api.example.com/v1', authUrl: 'https://auth.example.com', clientId: 'c', clientSecret: 's', scope: 'api.example.com/access' });",
        "const input: SubmissionCreate = { externalRef: 'r', submissionType: 'application', effectiveDate: '2027-01-01', productId: 'p', applicant: { legalName: 'A' } };",
        "const code: ErrorCode = 'not_found';",
        'export async function main(): Promise<string | undefined> {',
        '  try {',
        '    const r = await client.createSubmission(input, { timeoutMs: 1000, maxRetries: 1 });',
        '    return r.submissionId + (r.lastResponse?.requestId ?? "") + code;',
        '  } catch (e) {',
        '    if (e instanceof PartnerNotFoundError) return e.requestId;',
        '    throw e;',
        '  }',
        '}',
      ].join('\n'),
    );
    // Resolution starts at the consumer: node_modules of the empty directory above it.
    const r = await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project }).catch((e: { stdout: string }) => e);
    expect((r as { stdout: string }).stdout).toBe('');
    expect(dirname(project)).toBe(dir);
  });
});
