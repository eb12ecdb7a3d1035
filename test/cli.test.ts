// The `partner` CLI end to end, as a partner runs it (a separate process, piped, so JSON out):
// login into a private config directory, health, submissions, jobs, attachments, and the exit
// codes scripts rely on (0 ok, 1 API error, 2 usage, 3 retryable/timeout, 4 auth/config).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { scrape } from './support/metrics.js';
import { until } from './support/poll.js';
import { useReceivers } from './support/receiver.js';
import { Webhook } from 'standardwebhooks';

const PRODUCT = '11111111-2222-4333-8444-555555555555';
const CLI = join(ROOT, 'sdk/cli/dist/main.js');
let creds: ClientCreds;
let home: string;

afterAll(async () => {
  if (home) rmSync(home, { recursive: true, force: true });
});
const stack = useStack(async (stack) => {
  // The CLI runs from its build (dist/), as a partner runs it: vitest's globalSetup built it.
  await stack.startAll();
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'CLI test product');
  creds = await stack.createClient();
  home = mkdtempSync(join(tmpdir(), 'partner-cli-'));
  // Logged in from the start (as `partner login` leaves it, which its own test checks), so any test of
  // this file runs alone too (vitest -t).
  mkdirSync(join(home, 'config/partner'), { recursive: true, mode: 0o700 });
  const settings = { baseUrl: stack.gatewayUrl, authUrl: stack.authUrl, clientId: creds.clientId, clientSecret: creds.clientSecret, scope: stack.scope };
  writeFileSync(join(home, 'config/partner/config.json'), JSON.stringify(settings), { mode: 0o600 });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- checked field by field
}

function partner(
  args: string[],
  opts: { env?: Record<string, string>; stdin?: string; configHome?: string; onSpawn?: (child: ChildProcess) => void } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: home,
      // A clean environment: no PARTNER_* of the machine running the tests.
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: opts.configHome ?? join(home, 'config'), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    opts.onSpawn?.(child);
    child.stdin.end(opts.stdin ?? '');
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = stdout ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

const loginArgs = () => ['login', '--base-url', stack.gatewayUrl, '--auth-url', stack.authUrl, '--client-id', creds.clientId, '--scope', stack.scope, '--client-secret-stdin'];

function appFile(externalRef = `cli-${randomUUID()}`): string {
  const file = join(home, `app-${randomUUID()}.json`);
  writeFileSync(
    file,
    JSON.stringify({ externalRef, submissionType: 'application', effectiveDate: '2027-01-01', productId: PRODUCT, applicant: { legalName: 'Fabrikam Insurance Brokers' } }),
  );
  return file;
}

describe('partner login', () => {
  it('checks the credentials and stores them readable by the owner only', async () => {
    // A config directory of its own: the file's existence proves this login wrote it.
    const r = await partner(loginArgs(), { stdin: `${creds.clientSecret}\n`, configHome: join(home, 'login-config') });
    expect(r.code, r.stderr).toBe(0);
    const file = join(home, 'login-config/partner/config.json');
    expect(r.json).toEqual({ configFile: file, baseUrl: stack.gatewayUrl, authUrl: stack.authUrl, clientId: creds.clientId, scope: stack.scope });
    expect(r.stdout).not.toContain(creds.clientSecret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'login-config/partner')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ clientId: creds.clientId, clientSecret: creds.clientSecret });
  });

  it('refuses credentials the token server refuses, storing nothing (exit 4)', async () => {
    const elsewhere = join(home, 'other-config');
    const r = await partner(loginArgs(), { stdin: 'sk_wrong\n', configHome: elsewhere });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('invalid_client');
    expect(() => statSync(join(elsewhere, 'partner/config.json'))).toThrow();
  });
});

describe('partner login checks', () => {
  it('refuses a scope the token server does not grant, storing nothing (exit 4)', async () => {
    const elsewhere = join(home, 'scope-config');
    const args = loginArgs();
    args[args.indexOf('--scope') + 1] = 'api.production.example/access';
    const r = await partner(args, { stdin: `${creds.clientSecret}\n`, configHome: elsewhere });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('invalid_scope');
    expect(() => statSync(join(elsewhere, 'partner/config.json'))).toThrow();
  });

  it('refuses a scope the token server grants but this gateway does not serve (GET /v1/health answers 403), storing nothing (exit 4)', async () => {
    const elsewhere = join(home, 'other-gateway-config');
    const args = loginArgs();
    args[args.indexOf('--scope') + 1] = stack.otherScope;
    const r = await partner(args, { stdin: `${creds.clientSecret}\n`, configHome: elsewhere });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain('insufficient_scope');
    expect(r.stderr).toContain(`nothing stored: ${stack.gatewayUrl} refused the token for scope ${stack.otherScope}`);
    expect(() => statSync(join(elsewhere, 'partner/config.json'))).toThrow();
  });

  it('says "not logged in" with nothing configured, and names only the required settings that are missing', async () => {
    const empty = join(home, 'nothing');
    const none = await partner(['health'], { configHome: empty });
    expect(none.code).toBe(4);
    expect(none.stderr).toBe('partner: not logged in: run partner login\n');
    const partial = await partner(['health'], { configHome: empty, env: { PARTNER_BASE_URL: stack.gatewayUrl, PARTNER_CLIENT_ID: creds.clientId } });
    expect(partial.code).toBe(4);
    // The scope follows from the base URL: never listed.
    expect(partial.stderr).toBe('partner: not configured: PARTNER_AUTH_URL, PARTNER_CLIENT_SECRET missing; run partner login, or set them in the environment\n');
  });
});

describe('profiles', () => {
  it('keeps each profile in its own owner-only file, chosen by --profile or PARTNER_PROFILE', async () => {
    const config = join(home, 'profiles-config');
    const r = await partner([...loginArgs(), '--profile', 'uat'], { stdin: `${creds.clientSecret}\n`, configHome: config });
    expect(r.code, r.stderr).toBe(0);
    const file = join(config, 'partner/profiles/uat.json');
    expect(r.json).toMatchObject({ configFile: file, profile: 'uat' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, 'partner')).mode & 0o777).toBe(0o700);
    expect((await partner(['health', '--profile', 'uat'], { configHome: config })).code).toBe(0);
    expect((await partner(['health'], { configHome: config, env: { PARTNER_PROFILE: 'uat' } })).code).toBe(0);
    // The default profile is another one, and is not set up here.
    const other = await partner(['health'], { configHome: config });
    expect(other.code).toBe(4);
    expect(other.stderr).toContain('not logged in');
    expect((await partner(['health', '--profile', '../etc'], { configHome: config })).code).toBe(4);
    expect((await partner(['logout', '--profile', 'uat'], { configHome: config })).json).toEqual({ configFile: file, removed: true });
  });
});

describe('help', () => {
  it('shows a command\'s options and examples with --help, and a group\'s commands for the group alone', async () => {
    const help = await partner(['submissions', 'create', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: partner submissions create --file/);
    expect(help.stdout).toContain('--idempotency-key KEY');
    expect(help.stdout).toContain('Examples:\n  partner submissions create --file app.json');
    expect((await partner(['help', 'jobs', 'wait'])).stdout).toMatch(/^Usage: partner jobs wait JOB_ID/);
    const group = await partner(['policies']);
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/Commands:\n {2}list +list policies.*\n {2}get +one policy/);
  });
});

describe('partner commands', () => {
  it('health --json', async () => {
    const r = await partner(['health', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual({ status: 'ok', tenant: creds.tenant, partnerId: creds.partnerId, principalId: null });
  });

  it('submissions create --file, then submissions get', async () => {
    const created = await partner(['submissions', 'create', '--file', appFile()]);
    expect(created.code, created.stderr).toBe(0);
    // The create prints the submission (as `submissions get` shows it) with its receipt.
    const { receipt, ...submission } = created.json as Record<string, unknown>;
    expect(receipt).toEqual(expect.any(String));
    expect(submission).toMatchObject({ submissionName: 'Fabrikam Insurance Brokers', status: 'submitted', requirements: { currentlyDue: [] } });
    const got = await partner(['submissions', 'get', created.json.submissionId]);
    expect(got.code).toBe(0);
    expect(got.json.externalRef).toMatch(/^cli-/);
    expect(submission).toEqual(got.json);
  });

  it('submissions create --file - reads the submission from standard input', async () => {
    const externalRef = `cli-stdin-${randomUUID()}`;
    const created = await partner(['submissions', 'create', '--file', '-'], { stdin: readFileSync(appFile(externalRef), 'utf8') });
    expect(created.code, created.stderr).toBe(0);
    const got = await partner(['submissions', 'get', created.json.submissionId]);
    expect(got.json.externalRef).toBe(externalRef);
    const bad = await partner(['submissions', 'create', '--file', '-'], { stdin: '{not json' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('standard input is not valid JSON');
  });

  it('submissions create --wait 0, then jobs get and jobs wait', async () => {
    const started = await partner(['submissions', 'create', '--file', appFile('sandbox:delay=2'), '--wait', '0']);
    expect(started.code, started.stderr).toBe(0);
    expect(started.json).toMatchObject({ id: expect.stringMatching(/^job_/), status: 'accepted' });
    expect(started.stderr).toContain(`partner jobs wait ${started.json.id}`);
    const job = await partner(['jobs', 'get', started.json.id]);
    expect(job.code).toBe(0);
    expect(job.json.id).toBe(started.json.id);
    expect(['processing', 'succeeded']).toContain(job.json.status);
    const waited = await partner(['jobs', 'wait', started.json.id]);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.json).toMatchObject({ id: started.json.id, status: 'succeeded', result: { status: 'submitted' } });
  });

  it('attachments upload, list and download', async () => {
    const created = await partner(['submissions', 'create', '--file', appFile()]);
    const submissionId = created.json.submissionId as string;
    const file = join(home, 'schedule.csv');
    const content = 'location,value\nLeeds,1200000\nYork,850000\n';
    writeFileSync(file, content);
    const up = await partner(['attachments', 'upload', submissionId, file, '--type', 'schedule_of_values']);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json).toMatchObject({ submissionId, fileName: 'schedule.csv', contentType: 'text/csv', sizeBytes: content.length, documentType: 'schedule_of_values' });
    const list = await partner(['attachments', 'list', submissionId]);
    expect(list.json.items.map((a: { attachmentId: string }) => a.attachmentId)).toEqual([up.json.attachmentId]);
    const out = join(home, 'copy.csv');
    const down = await partner(['attachments', 'download', submissionId, up.json.attachmentId, '-o', out]);
    expect(down.code, down.stderr).toBe(0);
    expect(down.json).toMatchObject({ file: out, bytes: content.length, sha256: up.json.sha256 });
    expect(readFileSync(out, 'utf8')).toBe(content);
    const again = await partner(['attachments', 'download', submissionId, up.json.attachmentId, '-o', out]);
    expect(again.code).toBe(2);
    // The refusal says what to do, and nothing generic after it.
    expect(again.stderr).toBe(`partner: ${out} exists; use --force to replace it, or -o another name\n`);
  });
});

describe('--debug and partner api', () => {
  it('--debug prints each request and answer on stderr, never the token or the secret', async () => {
    const r = await partner(['health', '--debug']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`→ GET ${stack.gatewayUrl}/v1/health`);
    expect(r.stderr).toMatch(/← 200 GET \S+\/v1\/health in \d+ ms, request id \S+/);
    const token = await stack.token(creds);
    expect(r.stderr).not.toContain(creds.clientSecret);
    expect(r.stderr).not.toMatch(/bearer|authorization/i);
    expect(r.stderr).not.toContain(token.split('.')[0]);
  });

  it('api sends any request with the stored credentials and prints the answer as it is', async () => {
    const health = await partner(['api', 'GET', '/v1/health']);
    expect(health.code, health.stderr).toBe(0);
    expect(health.json).toMatchObject({ status: 'ok', partnerId: expect.any(String) });
    const missing = await partner(['api', 'GET', `/v1/submissions/${randomUUID()}`]);
    expect(missing.code).toBe(1);
    expect(missing.json).toMatchObject({ error: { code: 'not_found' } });
    expect(missing.stderr).toMatch(/^partner: HTTP 404 not_found \(request id \S+\)/);
    // A mutation with the caller's own key: sent twice, the same job.
    const key = randomUUID();
    const body = readFileSync(appFile(), 'utf8');
    const first = await partner(['api', 'POST', '/v1/submissions', '--data', '-', '-H', `Idempotency-Key: ${key}`], { stdin: body });
    expect(first.code, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ status: 'accepted', id: expect.stringMatching(/^job_/) });
    const again = await partner(['api', 'post', '/v1/submissions', '--data', body, '-H', `Idempotency-Key: ${key}`, '-H', 'Prefer: wait=10', '--include']);
    expect(again.code, again.stderr).toBe(0);
    const [head, answer] = again.stdout.split('\n\n');
    expect(head).toMatch(/^HTTP 200 OK\n/);
    expect(head).toContain(`job-id: ${first.json.id}`);
    expect(head).toContain('idempotent-replayed: true');
    expect(JSON.parse(answer!)).toMatchObject({ status: 'submitted', submissionName: 'Fabrikam Insurance Brokers' });
    expect((await partner(['api', 'GET', 'policies'])).code).toBe(2);
    expect((await partner(['api', 'POST', '/v1/submissions', '--data', '{not json'])).code).toBe(2);
  });
});

describe('exit codes', () => {
  it.each([
    [[]],
    [['frobnicate']],
    [['submissions', 'create']],
    [['submissions', 'create', '--file', '/nonexistent/app.json']],
    [['policies', 'list', '--bogus']],
    [['policies', 'list', '--status', 'sleeping']],
    [['jobs', 'get']],
    [['health', '--file', 'x.json']],
  ])('2 for bad usage: partner %j', async (args) => {
    const r = await partner(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/partner|Usage/);
    expect(r.stdout).toBe('');
  });

  it('1 for an API error retrying will not fix, with the envelope on stdout', async () => {
    const r = await partner(['submissions', 'get', randomUUID()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not_found: .*HTTP 404, request id /);
    expect(r.json).toMatchObject({ status: 404, error: { code: 'not_found', retryable: false } });
  });

  it('3 when the wait runs out, with the job to follow', async () => {
    const r = await partner(['submissions', 'create', '--file', appFile('sandbox:delay=5'), '--wait', '1']);
    expect(r.code).toBe(3);
    expect(r.json).toEqual({ id: expect.stringMatching(/^job_/), status: 'processing' });
    expect(r.stderr).toContain('partner jobs wait');
  });

  it('130 on Ctrl-C while waiting, with the job to follow', async () => {
    const started = await partner(['submissions', 'create', '--file', appFile('sandbox:delay=30'), '--wait', '0']);
    expect(started.code, started.stderr).toBe(0);
    const id = started.json.id as string;
    let child: ChildProcess | undefined;
    const waiting = partner(['jobs', 'wait', id], { onSpawn: (c) => (child = c) });
    // jobs wait holds a Prefer: wait request at the gateway; interrupt it there.
    await until('the CLI is waiting on the job', async () => (await scrape(stack.gatewayOpsUrl)).sum('partner_gateway_waiting_requests') >= 1);
    child!.kill('SIGINT');
    const r = await waiting;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain(`job ${id} goes on. Follow it with: partner jobs wait ${id}`);
  });

  it('4 without configuration, and when the environment overrides the secret with a wrong one', async () => {
    const none = await partner(['health'], { configHome: join(home, 'empty') });
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('partner login');
    const wrong = await partner(['health'], { env: { PARTNER_CLIENT_SECRET: 'sk_wrong' } });
    expect(wrong.code).toBe(4);
  });
});

describe('partner webhooks and partner listen', () => {
  beforeAll(async () => {
    await stack.startDispatcher();
  });
  const receiver = useReceivers();

  it('create, secret, deliveries, ping, update and delete an endpoint; deliveries verify with standardwebhooks', async () => {
    const r = await receiver();
    const created = await partner(['webhooks', 'create', '--url', r.url, '--types', 'submission.created', '--description', 'cli test']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ url: r.url, eventTypes: ['submission.created'], status: 'enabled', description: 'cli test' });
    const id = created.json.endpointId as string;
    // The secret was made by the CLI and printed once with the endpoint; the service signs with it.
    const secret = created.json.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect((await partner(['webhooks', 'secret', id])).json.secret).toBe(secret);
    const bad = await partner(['webhooks', 'create', '--url', r.url, '--secret', 'not-a-secret']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--secret must be whsec_');

    const submission = await partner(['submissions', 'create', '--file', appFile()]);
    expect(submission.code, submission.stderr).toBe(0);
    // Its own submission's delivery: the sandbox:delay jobs of earlier tests may create theirs meanwhile.
    const got = await r.waitFor('the submission.created delivery', (rs) => rs.find((x) => x.body.includes(submission.json.submissionId)));
    const event = new Webhook(secret).verify(got.body, {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    }) as { id: string; type: string; data: { submissionId: string } };
    expect(event).toMatchObject({ type: 'submission.created', data: { submissionId: submission.json.submissionId } });

    const delivery = await until('the delivery recorded', async () => {
      const d = await partner(['webhooks', 'deliveries', id, '--status', 'succeeded']);
      return (d.json?.items as Array<{ eventId: string }> | undefined)?.find((item) => item.eventId === event.id);
    });
    expect(delivery).toMatchObject({ eventType: 'submission.created', attempts: 1, lastResponseStatus: 200 });

    const ping = await partner(['webhooks', 'ping', id]);
    expect(ping.code, ping.stderr).toBe(0);
    await r.waitFor('the ping', (rs) => rs.some((x) => x.body.includes(ping.json.eventId)));

    const disabled = await partner(['webhooks', 'update', id, '--disable']);
    expect(disabled.json).toMatchObject({ status: 'disabled', disabledReason: 'partner' });
    expect((await partner(['webhooks', 'update', id])).code).toBe(2);
    const list = await partner(['webhooks', 'list']);
    expect(list.json.items.map((e: { endpointId: string }) => e.endpointId)).toContain(id);
    const deleted = await partner(['webhooks', 'delete', id]);
    expect(deleted.json).toEqual({ endpointId: id, deleted: true });
    expect((await partner(['webhooks', 'get', id])).code).toBe(1);
  });

  it('listen forwards each new event to a local URL, signed with the secret it was given, until Ctrl-C', async () => {
    const r = await receiver();
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    let child: ChildProcess | undefined;
    let stderr = '';
    let ready: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const running = partner(['listen', '--forward-to', r.url, '--types', 'submission.created', '--secret', secret], {
      onSpawn: (c) => {
        child = c;
        c.stderr!.on('data', (d: Buffer) => {
          stderr += d.toString();
          if (stderr.includes('forwarding events')) ready();
        });
      },
    });
    await started;
    const submission = await partner(['submissions', 'create', '--file', appFile()]);
    // Its own submission's event (a sandbox:delay job of an earlier test may create one meanwhile).
    const got = await r.waitFor('the forwarded event', (rs) => rs.find((x) => x.body.includes(submission.json.submissionId)));
    const headers = { 'webhook-id': String(got.headers['webhook-id']), 'webhook-timestamp': String(got.headers['webhook-timestamp']), 'webhook-signature': String(got.headers['webhook-signature']) };
    expect(new Webhook(secret).verify(got.body, headers)).toMatchObject({ type: 'submission.created', data: { submissionId: submission.json.submissionId } });
    child!.kill('SIGINT');
    const run = await running;
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n')[0]!)).toMatchObject({ type: 'submission.created', status: '200' });
    expect(run.stderr).toContain('resume with: partner listen');
  });
});
