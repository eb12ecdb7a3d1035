// The Python webhook-verification example (examples/python/verify_webhook.py, standard library only)
// against signatures made by `standardwebhooks`, the Standard Webhooks reference implementation, so
// the example agrees with what every Standard Webhooks sender and library produces.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Webhook } from 'standardwebhooks';
import { ROOT } from './support/stack.js';

const SCRIPT = join(ROOT, 'examples/python/verify_webhook.py');
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const other = `whsec_${randomBytes(32).toString('base64')}`;
const event = { id: 'evt_01JTEST', type: 'submission.created', createdAt: '2026-11-24T03:00:00Z', data: { submissionId: 'sub_1' } };
const body = JSON.stringify(event);

function signed(opts: { key?: string; id?: string; at?: Date; payload?: string } = {}): Record<string, string> {
  const id = opts.id ?? 'evt_01JTEST';
  const at = opts.at ?? new Date();
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(opts.key ?? secret).sign(id, at, opts.payload ?? body),
  };
}

function check(headers: Record<string, string>, payload = body): Promise<{ code: number; out: { verified: boolean; error?: string; event?: unknown } }> {
  return new Promise((resolve) => {
    const child = execFile('python3', [SCRIPT, 'check', JSON.stringify(headers)], { env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: secret } }, (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: JSON.parse(stdout) }),
    );
    child.stdin!.end(payload);
  });
}

describe('verify_webhook.py check', () => {
  it('accepts a delivery signed by the reference library, and returns the event', async () => {
    expect(await check(signed())).toEqual({ code: 0, out: { verified: true, event } });
  });

  it('accepts any one matching signature among several (a secret being rotated), in any header case', async () => {
    const h = signed();
    const old = signed({ key: other })['webhook-signature'];
    const r = await check({ 'Webhook-Id': h['webhook-id']!, 'Webhook-Timestamp': h['webhook-timestamp']!, 'Webhook-Signature': `${old} v2,ignored ${h['webhook-signature']}` });
    expect(r.out.verified).toBe(true);
  });

  it('refuses a changed body, another secret, a stale or future timestamp, and missing headers', async () => {
    expect((await check(signed(), body.replace('sub_1', 'sub_2'))).out).toMatchObject({ verified: false, error: 'no signature matches' });
    expect((await check(signed({ key: other }))).out).toMatchObject({ verified: false, error: 'no signature matches' });
    const stale = new Date(Date.now() - 10 * 60_000);
    expect((await check(signed({ at: stale }))).out).toMatchObject({ verified: false, error: expect.stringContaining('tolerance') });
    const future = new Date(Date.now() + 10 * 60_000);
    expect((await check(signed({ at: future }))).out).toMatchObject({ verified: false, error: expect.stringContaining('tolerance') });
    const { 'webhook-signature': _dropped, ...unsigned } = signed();
    expect(await check(unsigned)).toMatchObject({ code: 1, out: { verified: false, error: expect.stringContaining('missing') } });
    // The id is part of what is signed: a signature replayed under another id does not verify.
    const h = signed();
    expect((await check({ ...h, 'webhook-id': 'evt_other' })).out.verified).toBe(false);
  });
});

describe('verify_webhook.py serve', () => {
  let receiver: ChildProcess;
  let url: string;
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  beforeAll(async () => {
    receiver = spawn('python3', [SCRIPT, 'serve', '0'], { env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: secret }, stdio: ['ignore', 'pipe', 'inherit'] });
    const rl = createInterface({ input: receiver.stdout! });
    url = await new Promise<string>((resolve) =>
      rl.on('line', (line) => {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.listening) return resolve(`http://127.0.0.1:${String(parsed.listening)}/hooks`);
        lines.push(parsed);
        waiters.splice(0).forEach((w) => w());
      }),
    );
  });
  afterAll(() => receiver?.kill());
  const nextLine = async (n: number) => {
    while (lines.length < n) await new Promise<void>((r) => waiters.push(r));
    return lines[n - 1];
  };

  it('answers 204 to a signed delivery, 204 without handling it again to a retry, 400 to a forgery', async () => {
    const h = signed({ id: 'evt_serve_1' });
    const post = (headers: Record<string, string>, payload = body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload });
    expect((await post(h)).status).toBe(204);
    expect(await nextLine(1)).toEqual({ received: 'evt_serve_1', type: 'submission.created', event });
    expect((await post(h)).status).toBe(204);
    expect(await nextLine(2)).toEqual({ duplicate: 'evt_serve_1' });
    expect((await post(signed({ key: other, id: 'evt_serve_2' }))).status).toBe(400);
    expect(await nextLine(3)).toEqual({ refused: 'no signature matches' });
  });
});
