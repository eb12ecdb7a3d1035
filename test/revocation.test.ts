// Revocation in seconds (issue 19): `client disable`, `client permissions`, `client limits` and
// `client revoke-tokens` take effect on every gateway within seconds, not at token expiry; a client's
// rate limit is its current one, whichever of its tokens it presents; token lifetimes are bounded on
// verification; a malleated ECDSA signature is no different token. Two gateways share one stack: the
// admin command runs as operators run it, and the other gateway must notice.
import { afterAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createPool, type Pool } from '@partner/shared/db/pg';
import { createLogger } from '@partner/shared/telemetry/logger';
import { loadSigningKey } from '../services/auth/src/keys.js';
import { createClient as insertClient } from '../services/auth/src/repo.js';
import { ALL_PERMISSIONS, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { accessClaims, signAccessToken } from './support/claims.js';

let gatewayA: string;
let gatewayB: string;
let authPool: Pool;

const stack = useStack(async (stack) => {
  await stack.startAll();
  gatewayA = stack.gatewayUrl;
  await stack.startGateway();
  gatewayB = stack.gatewayUrl;
  authPool = createPool({ url: stack.env.DATABASE_URL!, schema: 'auth', max: 1, applicationName: 'test', logger: createLogger('test', 'silent') });
});
afterAll(async () => {
  await authPool?.end();
});

/** A client made straight in the auth schema (the CLI's own path; quicker than a CLI process per client). */
async function newClient(permissions = ALL_PERMISSIONS): Promise<ClientCreds> {
  const tenant = `tenant-${randomUUID().slice(0, 6)}`;
  const partnerId = `partner-${randomUUID().slice(0, 6)}`;
  const { clientId, clientSecret } = await insertClient(authPool, { tenantId: tenant, partnerId, permissions: permissions as never });
  return { clientId, clientSecret, tenant, partnerId, permissions };
}

const health = (token: string, base: string) => stack.api('GET', '/v1/health', { token, base });

/** Requests `check` back to back against the gateway until it holds; the time it took, in ms. */
async function timeUntil(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not so within ${timeoutMs} ms`);
  }
  return Date.now() - started;
}

/** ms from the change's commit (the client row's updated_at, same machine clock) to now. */
async function sinceCommit(clientId: string): Promise<number> {
  const [row] = await stack.sql<{ ms: number }>('SELECT extract(epoch FROM updated_at) * 1000 AS ms FROM auth.clients WHERE client_id = $1', [clientId]);
  return Date.now() - Number(row!.ms);
}

describe('revocation reaches every gateway within seconds', () => {
  it('client disable: the next request on another gateway is 401 (p99 over 20 trials)', async () => {
    const trials = 20;
    const clients = await Promise.all(Array.from({ length: trials }, () => newClient()));
    const latencies: number[] = [];
    const commandMs: number[] = [];
    for (const c of clients) {
      const token = await stack.token(c);
      expect((await health(token, gatewayA)).status).toBe(200);
      expect((await health(token, gatewayB)).status).toBe(200);
      const started = Date.now();
      let refusedAt = 0;
      // Watch gateway B while the operator disables the client (through the CLI, as operators do).
      // The watch's own limit counts the command's run too (a process of its own: seconds on a loaded
      // machine; once more than 10 s in the off-switch run of CI), so it is wide: the figure judged
      // below is from the change's commit.
      const watching = timeUntil(async () => {
        const r = await health(token, gatewayB);
        if (r.status === 401) {
          refusedAt = Date.now();
          expect(r.body.error.code).toBe('invalid_token');
          return true;
        }
        expect(r.status).toBe(200);
        return false;
      }, 30_000);
      // Its failure is reported where it is awaited, after the command, not as an unhandled rejection.
      watching.catch(() => undefined);
      await stack.admin('client', 'disable', '--client', c.clientId);
      commandMs.push(Date.now() - started);
      await watching;
      // From the commit of the change to the first 401 on the other gateway.
      latencies.push((await sinceCommit(c.clientId)) - (Date.now() - refusedAt));
      expect((await health(token, gatewayA)).status).toBe(401);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
    const figures = { trials, p50: pct(50), p99: pct(99), max: sorted.at(-1), commandMsP50: [...commandMs].sort((a, b) => a - b)[Math.floor(trials / 2)] };
    console.log(`revocation: client disable → first 401 on another gateway, ms from commit: ${JSON.stringify(figures)}`);
    // A generous behavioural bound; the figures are recorded in docs/reliability.md.
    expect(figures.p99).toBeLessThan(5_000);
  }, 240_000);

  it('client permissions: a removed permission is refused on every gateway within seconds, an added one granted', async () => {
    const c = await newClient(['health/read', 'policies/read']);
    const token = await stack.token(c);
    for (const base of [gatewayA, gatewayB]) expect((await stack.api('GET', '/v1/policies', { token, base })).status).toBe(200);
    await stack.admin('client', 'permissions', '--client', c.clientId, '--permissions', 'health/read,jobs/read');
    for (const base of [gatewayA, gatewayB]) {
      await timeUntil(async () => (await stack.api('GET', '/v1/policies', { token, base })).status === 403, 5_000);
      expect((await stack.api('GET', `/v1/jobs/job_${'0'.repeat(32)}`, { token, base })).status).toBe(404);
    }
  });

  it('client revoke-tokens: every token issued before is refused on every gateway; a new one works', async () => {
    const c = await newClient();
    const [old1, old2] = [await stack.token(c), await stack.token(c)];
    for (const t of [old1, old2]) expect((await health(t, gatewayB)).status).toBe(200);
    const out = await stack.admin('client', 'revoke-tokens', '--client', c.clientId);
    expect(out).toMatchObject({ clientId: c.clientId, tokensRevoked: true, effective: expect.stringMatching(/within seconds/) });
    for (const base of [gatewayA, gatewayB]) {
      for (const t of [old1, old2]) {
        await timeUntil(async () => (await health(t, base)).status === 401, 5_000);
        expect((await health(t, base)).body.error).toMatchObject({ code: 'invalid_token', message: 'the token has been revoked' });
      }
    }
    const fresh = await stack.token(c);
    for (const base of [gatewayA, gatewayB]) expect((await health(fresh, base)).status).toBe(200);
  });

  it('client limits: the new limit applies to the tokens the client already holds', async () => {
    const c = await newClient();
    const token = await stack.token(c);
    expect((await health(token, gatewayB)).headers.get('ratelimit-policy')).toBe('"client";q=100000;w=1');
    await stack.admin('client', 'limits', '--client', c.clientId, '--rps', '2', '--burst', '4');
    await timeUntil(async () => (await health(token, gatewayB)).headers.get('ratelimit-policy') === '"client";q=4;w=2', 5_000);
  });
});

describe("a client's rate limit", () => {
  it('is not reset by alternating tokens that name different limits', async () => {
    const c = await newClient();
    const before = await stack.token(c); // names no limit: the (test stack's huge) default
    await stack.admin('client', 'limits', '--client', c.clientId, '--rps', '1', '--burst', '3');
    const after = await stack.token(c); // names 1 rps, burst 3
    let allowed = 0;
    for (let i = 0; i < 30; i++) if ((await health(i % 2 ? before : after, gatewayA)).status === 200) allowed++;
    // The burst of 3 and at most a couple of refills while the 30 requests run, not 30.
    expect(allowed).toBeLessThanOrEqual(6);
  });
});

describe('token lifetime and signature form', () => {
  const sign = async (c: ClientCreds, times: { iat: number; exp: number }, tv = 0) => {
    const key = await loadSigningKey(authPool, Buffer.from(stack.env.AUTH_KEY_ENCRYPTION_KEY!, 'base64'));
    return signAccessToken(accessClaims(stack, c, { ...times, tv }), key.key, { kid: key.kid });
  };

  it('refuses a token claiming a longer lifetime than the issuer grants, or issued in the future', async () => {
    const c = await newClient();
    const now = Math.floor(Date.now() / 1000);
    expect((await health(await sign(c, { iat: now, exp: now + 900 }), gatewayA)).status).toBe(200);
    const tooLong = await health(await sign(c, { iat: now, exp: now + 901 }), gatewayA);
    expect(tooLong.status).toBe(401);
    expect(tooLong.body.error.message).toMatch(/lifetime/);
    const future = await health(await sign(c, { iat: now + 120, exp: now + 600 }), gatewayA);
    expect(future.status).toBe(401);
    expect(future.body.error.message).toMatch(/not valid yet/);
    // Within the clock skew is fine.
    expect((await health(await sign(c, { iat: now + 10, exp: now + 600 }), gatewayA)).status).toBe(200);
  });

  it('treats a malleated signature (s → n − s) as the same token: same caller, revoked with it', async () => {
    const c = await newClient();
    const token = await stack.token(c);
    const [h, p, sig] = token.split('.') as [string, string, string];
    const raw = Buffer.from(sig, 'base64url');
    const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
    const s = BigInt(`0x${raw.subarray(32).toString('hex')}`);
    const malleated = `${h}.${p}.${Buffer.concat([raw.subarray(0, 32), Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex')]).toString('base64url')}`;
    expect(malleated).not.toBe(token);
    const [a, b] = [await health(token, gatewayA), await health(malleated, gatewayA)];
    // WebCrypto (through jose) accepts both forms; the malleated token is only another spelling of the
    // same claims: the same caller, the same limits, and revoked by the same command.
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
    await stack.admin('client', 'revoke-tokens', '--client', c.clientId);
    await timeUntil(async () => (await health(malleated, gatewayA)).status === 401, 5_000);
    expect((await health(token, gatewayA)).status).toBe(401);
  });
});
