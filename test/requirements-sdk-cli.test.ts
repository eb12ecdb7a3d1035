// The SDK and the CLI on products and requirements (issue 29, item 7), against the real stack: the
// requirements cached by ETag (a repeated call is a 304), validateSubmission, the typed
// RequirementsNotMetError with its fields, and `partner products …`, `partner submissions validate`
// (exit 0 valid, 1 invalid, each field's problem printed) and `submissions create --validate`.
import { afterAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PartnerClient, RequirementsNotMetError } from '../sdk/client/src/index.js';
import { ROOT, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { packPartnerPackages } from './support/packages.js';

const PRODUCT = randomUUID();
const CLI = join(ROOT, 'sdk/cli/dist/main.js');
let creds: ClientCreds;
let home: string;

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});
const stack = useStack(async (stack) => {
  await stack.startAll();
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'SDK requirements product');
  home = mkdtempSync(join(tmpdir(), 'partner-req-'));
  const file = join(home, 'requirements.json');
  writeFileSync(file, JSON.stringify({ applicant: { required: ['taxId'] } }));
  await stack.admin('product', 'requirements', 'set', '--id', PRODUCT, file);
  creds = await stack.createClient();
  mkdirSync(join(home, 'config/partner'), { recursive: true, mode: 0o700 });
  const settings = { baseUrl: stack.gatewayUrl, authUrl: stack.authUrl, clientId: creds.clientId, clientSecret: creds.clientSecret, scope: stack.scope };
  writeFileSync(join(home, 'config/partner/config.json'), JSON.stringify(settings), { mode: 0o600 });
});

const body = (over: Record<string, unknown> = {}) => ({
  externalRef: `sdk-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: '2030-01-01',
  productId: PRODUCT,
  applicant: { legalName: 'Acme Holdings LLC' },
  ...over,
});

function partner(args: string[], stdin = '', cli = CLI): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, 'config') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.stdin.end(stdin);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the SDK', () => {
  it('caches requirements by ETag, validates, and throws RequirementsNotMetError naming the fields', async () => {
    const statuses: number[] = [];
    const client = new PartnerClient({
      baseUrl: stack.gatewayUrl,
      authUrl: stack.authUrl,
      clientId: creds.clientId,
      clientSecret: creds.clientSecret,
      scope: stack.scope,
      onResponse: (r) => {
        if (r.url.endsWith('/requirements')) statuses.push(r.status);
      },
    });
    const first = await client.getProductRequirements(PRODUCT);
    const second = await client.getProductRequirements(PRODUCT);
    expect(statuses).toEqual([200, 304]);
    expect(second).toEqual(first);
    expect(first.applicant.required).toEqual(['taxId']);
    expect((await client.listProducts({ active: true })).items.map((p) => p.productId)).toContain(PRODUCT);
    expect((await client.getProduct(PRODUCT)).requirementsVersion).toBe(first.version);

    const verdict = await client.validateSubmission(body());
    expect(verdict).toMatchObject({ valid: false, errors: [{ field: 'applicant.taxId', code: 'required' }], requirementsVersion: first.version });
    const err = await client.createSubmission(body()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequirementsNotMetError);
    expect((err as RequirementsNotMetError).fields).toEqual(['applicant.taxId']);
    expect((err as RequirementsNotMetError).retryable).toBe(false);
  });
});

describe('the CLI', () => {
  it('products list|get|requirements', async () => {
    const list = await partner(['products', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).items.map((p: { productId: string }) => p.productId)).toContain(PRODUCT);
    const get = await partner(['products', 'get', PRODUCT, '--json']);
    expect(JSON.parse(get.stdout)).toMatchObject({ productId: PRODUCT, active: true });
    const req = await partner(['products', 'requirements', PRODUCT]);
    expect(req.code).toBe(0);
    expect(JSON.parse(req.stdout).submissionSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect((await partner(['products', 'requirements', randomUUID()])).code).toBe(1);
  });

  it('submissions validate: exit 0 when valid, 1 when not, printing each field', async () => {
    const bad = await partner(['submissions', 'validate', '--file', '-'], JSON.stringify(body({ effectiveDate: '2030-02-30' })));
    expect(bad.code).toBe(1);
    // Not a terminal: the verdict as JSON on stdout, each field's problem on stderr.
    expect(JSON.parse(bad.stdout)).toMatchObject({ valid: false });
    expect(bad.stderr).toContain('applicant.taxId: is required');
    expect(bad.stderr).toContain('effectiveDate: must be a valid date');
    const file = join(home, 'good.json');
    writeFileSync(file, JSON.stringify(body({ applicant: { legalName: 'Acme', taxId: '12-3456789' } })));
    const good = await partner(['submissions', 'validate', '--file', file]);
    expect(good.code, good.stdout + good.stderr).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ valid: true, errors: [] });
  });

  it('submissions create --validate creates nothing when the body would fail', async () => {
    const ref = `cli-${randomUUID()}`;
    const run = await partner(['submissions', 'create', '--validate', '--file', '-'], JSON.stringify(body({ externalRef: ref })));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('applicant.taxId: is required');
    expect(await stack.sql('SELECT 1 FROM job.jobs WHERE payload->>\'externalRef\' = $1', [ref])).toHaveLength(0);
    const ok = await partner(['submissions', 'create', '--validate', '--json', '--file', '-'], JSON.stringify(body({ applicant: { legalName: 'Acme', taxId: '123456789' } })));
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).status).toBe('submitted');
  });
});

describe('the CLI installed from its package', () => {
  it('validates a submission (packed with npm pack, installed offline, as a partner gets it)', async () => {
    const run = promisify(execFile);
    const env = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
    const packs = mkdtempSync(join(home, 'packs-'));
    const packed = await packPartnerPackages(packs);
    const consumer = mkdtempSync(join(home, 'consumer-'));
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--no-package-lock', '--cache', join(consumer, '.npm-cache'), packed.sdk, packed.cli, packed.jose], { cwd: consumer, env });
    const installed = join(consumer, 'node_modules/@partner/cli/dist/main.js');
    const bad = await partner(['submissions', 'validate', '--file', '-'], JSON.stringify(body()), installed);
    expect(bad.code, bad.stderr).toBe(1);
    expect(bad.stderr).toContain('applicant.taxId: is required');
    const good = await partner(['submissions', 'validate', '--file', '-'], JSON.stringify(body({ applicant: { legalName: 'A', taxId: '123456789' } })), installed);
    expect(good.code, good.stderr).toBe(0);
  }, 240_000);
});
