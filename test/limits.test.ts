// Limits that protect the service from excessive and hostile traffic: per-client rate limits with
// RateLimit headers, credential-stuffing protection at the token endpoint, slow clients cut off.
import { describe, expect, it } from 'vitest';
import { createConnection } from 'node:net';
import { basic, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { provision, submissionBody } from './support/fixtures.js';

let client: ClientCreds;
const stack = useStack(async (stack) => {
  await stack.startAll({
    RATE_LIMIT_RPS: '1',
    RATE_LIMIT_BURST: '3',
    HEADERS_TIMEOUT_MS: '1000',
    TRUST_PROXY: 'true',
    AUTH_MAX_FAILURES_PER_SOURCE: '5',
    AUTH_SLOW_AFTER_FAILURES: '2',
    AUTH_MAX_FAILURE_DELAY_MS: '2000',
    MAX_WAITERS: '0',
  });
  client = await stack.createClient();
});

const tokenFrom = (source: string, id: string, secret: string) =>
  stack.tokenRequest({
    headers: { authorization: basic(id, secret), 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': source },
    body: `grant_type=client_credentials&scope=${encodeURIComponent(stack.scope)}`,
  });

describe('per-client rate limit', () => {
  it('announces the policy, counts down, then answers 429 rate_limited with Retry-After', async () => {
    const token = await stack.token(client);
    const first = await stack.api('GET', '/v1/health', { token });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe('"client";q=3;w=3');
    expect(first.headers.get('ratelimit')).toMatch(/^"client";r=2;t=\d+$/);
    // A burst well beyond the bucket (2 left, refilling at 1/s): most of it is refused.
    const burst = await Promise.all(Array.from({ length: 12 }, () => stack.api('GET', '/v1/health', { token })));
    const refused = burst.filter((r) => r.status === 429);
    expect(burst.filter((r) => r.status === 200).length).toBeLessThanOrEqual(4);
    expect(refused.length).toBeGreaterThanOrEqual(8);
    for (const r of refused) {
      expect(r.body.error).toMatchObject({ code: 'rate_limited', retryable: true });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get('ratelimit')).toMatch(/^"client";r=0;t=\d+$/);
    }
  });

  it("applies a client's own limit, set by an operator, from its next token", async () => {
    const vip = await stack.createClient();
    await stack.admin('client', 'limits', '--client', vip.clientId, '--rps', '100', '--burst', '20');
    const token = await stack.token(vip);
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await stack.api('GET', '/v1/health', { token })).status);
    expect(statuses).toEqual(Array(10).fill(200));
  });
});

describe('token endpoint under credential stuffing', () => {
  it('slows failed guesses for a client id but never its own valid requests', async () => {
    const victim = await stack.createClient();
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      const started = Date.now();
      const r = await tokenFrom(`10.1.0.${i}`, victim.clientId, 'sk_guess');
      expect(r.status).toBe(401);
      times.push(Date.now() - started);
    }
    // The 3rd failure onwards is held back, doubling from 100 ms: the 7th waits 1.6 s.
    expect(times[6]).toBeGreaterThanOrEqual(1_500);
    // The client's own valid request is not held back at all: far below that delay, with room for a
    // loaded machine (the bound is what separates "not delayed" from "delayed", not a latency target).
    const started = Date.now();
    const ok = await tokenFrom('192.168.7.7', victim.clientId, victim.clientSecret);
    expect(ok.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('refuses a source with too many failures, whatever it presents, and not other sources', async () => {
    for (let i = 0; i < 5; i++) expect((await tokenFrom('10.2.0.1', `cli_unknown${i}`, 'x')).status).toBe(401);
    const refused = await tokenFrom('10.2.0.1', client.clientId, client.clientSecret);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await tokenFrom('10.2.0.2', client.clientId, client.clientSecret)).status).toBe(200);
  });
});

describe('slow clients', () => {
  it('cuts off a request whose headers trickle in (slow loris)', async () => {
    const url = new URL(stack.gatewayUrl);
    const started = Date.now();
    const answer = await new Promise<string>((resolve) => {
      let received = '';
      const socket = createConnection({ host: url.hostname, port: Number(url.port) }, () => {
        socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n');
        const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 200);
        socket.on('close', () => {
          clearInterval(drip);
          resolve(received);
        });
      });
      socket.on('data', (d) => (received += d.toString()));
      socket.on('error', () => undefined);
    });
    expect(answer).toMatch(/^HTTP\/1.1 408/);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('waiting requests', () => {
  it('answers at once, without Preference-Applied, when the gateway holds its maximum of waiters', async () => {
    const token = await provision(stack);
    const started = Date.now();
    const r = await stack.api('POST', '/v1/submissions', { token, headers: { prefer: 'wait=10' }, json: submissionBody('sandbox:delay=3', 'Impatient Ltd') });
    expect(r.status).toBe(202);
    expect(r.headers.get('preference-applied')).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('token endpoint under concurrent guessing', () => {
  it('evaluates at most the failure limit of 200 concurrent wrong-secret attempts from one source', async () => {
    const victim = await stack.createClient();
    const answers = await Promise.all(Array.from({ length: 200 }, () => tokenFrom('10.4.0.1', victim.clientId, 'sk_wrong')));
    const statuses = answers.map((r) => r.status);
    // AUTH_MAX_FAILURES_PER_SOURCE is 5 here: 5 secrets checked (401), every other attempt refused
    // before its secret was looked at (429).
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(195);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  });
});
