// Versioning and deprecation (README.md): operations listed in DEPRECATIONS answer every response with
// Deprecation (RFC 9745), Sunset (RFC 8594) and Link rel="deprecation"; others do not. The SDK and
// the CLI warn once per deprecated operation.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { PartnerClient, type DeprecationNotice } from '../sdk/client/src/index.js';
import { ROOT, type ClientCreds } from './support/stack.js';
import { runProcess } from './support/run.js';
import { useStack } from './support/use-stack.js';

const DOCS = 'https://docs.example.com/deprecations/policies-list';
const DEPRECATIONS = [
  { operation: 'GET /v1/policies', deprecation: '2026-01-01T00:00:00Z', sunset: '2027-07-01T00:00:00Z', link: DOCS },
  { operation: 'GET /v1/policies/:id', deprecation: '2026-01-01T00:00:00Z', link: DOCS },
];
let creds: ClientCreds;
let token: string;

const stack = useStack(async (stack) => {
  await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['-b', 'sdk/cli'], { cwd: ROOT });
  await stack.startAll({ DEPRECATIONS: JSON.stringify(DEPRECATIONS) });
  creds = await stack.createClient();
  token = await stack.token(creds);
});

describe('deprecation headers from configuration', () => {
  it('marks every answer of a deprecated operation, errors included', async () => {
    const list = await stack.api('GET', '/v1/policies', { token });
    expect(list.status).toBe(200);
    expect(list.headers.get('deprecation')).toBe(`@${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
    expect(list.headers.get('sunset')).toBe('Thu, 01 Jul 2027 00:00:00 GMT');
    expect(list.headers.get('link')).toBe(`<${DOCS}>; rel="deprecation"; type="text/html"`);

    const missing = await stack.api('GET', `/v1/policies/${randomUUID()}`, { token });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(missing.headers.get('sunset')).toBeNull();
  });

  it('leaves other operations alone', async () => {
    const health = await stack.api('GET', '/v1/health', { token });
    expect(health.status).toBe(200);
    expect(health.headers.get('deprecation')).toBeNull();
    expect(health.headers.get('link')).toBeNull();
  });
});

describe('clients warn once per deprecated operation', () => {
  it('the SDK calls onDeprecation once per operation', async () => {
    const notices: DeprecationNotice[] = [];
    const api = new PartnerClient({
      baseUrl: stack.gatewayUrl,
      authUrl: stack.authUrl,
      clientId: creds.clientId,
      clientSecret: creds.clientSecret,
      scope: stack.scope,
      onDeprecation: (n) => notices.push(n),
    });
    await api.listPolicies();
    await api.listPolicies({ limit: 1 });
    await api.health();
    await api.getPolicy(randomUUID()).catch(() => undefined);
    await api.getPolicy(randomUUID()).catch(() => undefined);
    expect(notices.map((n) => n.operation)).toEqual(['GET /v1/policies', 'GET /v1/policies/{id}']);
    expect(notices[0]).toMatchObject({ link: DOCS, sunset: new Date('2027-07-01T00:00:00Z'), deprecatedAt: new Date('2026-01-01T00:00:00Z') });
  });

  it('the CLI prints the warning on stderr, keeping stdout JSON', async () => {
    const home = mkdtempSync(join(tmpdir(), 'partner-deprecation-'));
    const run = await runProcess(process.execPath, [join(ROOT, 'sdk/cli/dist/main.js'), 'policies', 'list', '--all'], {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        PARTNER_BASE_URL: stack.gatewayUrl,
        PARTNER_AUTH_URL: stack.authUrl,
        PARTNER_CLIENT_ID: creds.clientId,
        PARTNER_CLIENT_SECRET: creds.clientSecret,
        PARTNER_SCOPE: stack.scope,
      },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(() => JSON.parse(run.stdout)).not.toThrow();
    expect(run.stderr.match(/deprecated/g)).toHaveLength(1);
    expect(run.stderr).toContain(`warning: GET /v1/policies is deprecated; it stops working on 2027-07-01; see ${DOCS}`);
  });
});
