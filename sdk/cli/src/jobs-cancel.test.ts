// `partner jobs cancel` (and the other job commands' handling of a cancelled job) against a local fake
// of the API and its token endpoint: the request it sends, what it prints, and its exit codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { COMMANDS, EXIT, run } from './cli.js';
import { commandHelp } from './help.js';
import { OPTIONS } from './command.js';

type Answer = { status: number; body: unknown };
type Seen = { method: string; path: string; headers: IncomingMessage['headers']; body: string };

const canceledError = { code: 'canceled', message: 'the job was cancelled by its partner before it started', retryable: false };
const canceled = { id: 'job_9', kind: 'submission.create', status: 'canceled', error: canceledError, createdAt: '2026-11-21T12:00:00.000Z', updatedAt: '2026-11-21T12:00:03.000Z' };
const errorBody = (code: string) => ({ error: { code, message: `${code} here`, retryable: false } });

let server: Server;
let baseUrl: string;
let home: string;
const seen: Seen[] = [];
let answer: (s: Seen) => Answer = () => ({ status: 500, body: errorBody('internal') });

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'partner-cli-'));
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${seen.length}` });
        res.end(JSON.stringify(json));
      };
      if (url.pathname === '/oauth2/token') return send(200, { access_token: 'tok', token_type: 'Bearer', expires_in: 3600 });
      const s: Seen = { method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, body };
      seen.push(s);
      const a = answer(s);
      send(a.status, a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(home, { recursive: true, force: true });
});

async function partner(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: home,
    PARTNER_BASE_URL: baseUrl,
    PARTNER_AUTH_URL: baseUrl,
    PARTNER_CLIENT_ID: 'c',
    PARTNER_CLIENT_SECRET: 's',
    PARTNER_SCOPE: 'api.example.com/access',
  };
  const code = await run(argv, { stdout, stderr, stdin: new PassThrough(), env }, new AbortController().signal);
  return { code, stdout: out, stderr: err };
}

describe('partner jobs cancel', () => {
  it('POSTs /v1/jobs/{id}/cancel with no body, prints the cancelled job and exits 0 (again 0 for a re-cancel)', async () => {
    seen.length = 0;
    answer = () => ({ status: 200, body: canceled });
    for (let i = 0; i < 2; i++) {
      const r = await partner('jobs', 'cancel', 'job_9', '--json');
      expect(r.code).toBe(EXIT.ok);
      expect(JSON.parse(r.stdout)).toEqual(canceled);
    }
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/jobs/job_9/cancel', 'POST /v1/jobs/job_9/cancel']);
    expect(seen[0]!.body).toBe('');
    expect(seen[0]!.headers['idempotency-key']).toBeUndefined();
  });

  it('a job that has started or settled: exit 1 with job_not_cancelable, and how to see its outcome', async () => {
    answer = () => ({ status: 409, body: errorBody('job_not_cancelable') });
    const r = await partner('jobs', 'cancel', 'job_9');
    expect(r.code).toBe(EXIT.apiError);
    expect(r.stderr).toContain('partner: job_not_cancelable: job_not_cancelable here (HTTP 409');
    expect(r.stderr).toContain('partner jobs wait job_9');
  });

  it.each([
    [404, 'not_found', EXIT.apiError],
    [403, 'forbidden', EXIT.auth],
  ])('%i %s exits %i', async (status, code, exit) => {
    answer = () => ({ status, body: errorBody(code) });
    const r = await partner('jobs', 'cancel', 'job_9');
    expect(r.code).toBe(exit);
    expect(r.stderr).toContain(`partner: ${code}:`);
  });

  it('takes exactly one JOB_ID (usage, exit 2) and has help with examples', async () => {
    expect((await partner('jobs', 'cancel')).code).toBe(EXIT.usage);
    const help = commandHelp('jobs cancel', COMMANDS['jobs cancel']!, OPTIONS);
    expect(help).toContain('Usage: partner jobs cancel JOB_ID');
    expect(help).toMatch(/exactly one wins/);
  });
});

describe('a cancelled job in the other commands', () => {
  it('jobs wait prints the cancelled job and exits 1: it never took effect', async () => {
    answer = () => ({ status: 200, body: canceled });
    const r = await partner('jobs', 'wait', 'job_9', '--json');
    expect(r.code).toBe(EXIT.apiError);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'canceled', error: { code: 'canceled' } });
  });

  it('a mutation whose job was cancelled while it waited exits 1 with canceled and the job id', async () => {
    answer = () => ({ status: 409, body: { error: canceledError, jobId: 'job_9' } });
    const file = join(home, 'app.json');
    writeFileSync(file, JSON.stringify({ externalRef: 'sandbox:hold=5', submissionType: 'application', effectiveDate: '2027-01-01', productId: 'p', applicant: { legalName: 'A' } }));
    const r = await partner('submissions', 'create', '--file', file);
    expect(r.code).toBe(EXIT.apiError);
    expect(r.stderr).toMatch(/partner: canceled: .*HTTP 409, job job_9/);
  });

  it('jobs list accepts --status canceled and sends it', async () => {
    seen.length = 0;
    answer = () => ({ status: 200, body: { items: [canceled], nextCursor: null } });
    const r = await partner('jobs', 'list', '--status', 'canceled', '--json');
    expect(r.code).toBe(EXIT.ok);
    expect(seen[0]!.path).toBe('/v1/jobs?status=canceled');
  });
});
