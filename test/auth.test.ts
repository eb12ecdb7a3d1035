// The walking skeleton end to end: the token server (RFC 6749 client credentials, errors per §5.2,
// JWKS, metadata, key rotation) and the gateway's authentication, scope, permission and principal
// checks, against real PostgreSQL, gRPC and HTTP.
import { beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, decodeProtectedHeader, decodeJwt, generateKeyPair, type CryptoKey } from 'jose';
import { ALL_PERMISSIONS, basic, Stack, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { accessClaims, nowSeconds, signAccessToken } from './support/claims.js';
import { loadSigningKey } from '../services/auth/src/keys.js';
import { readAuthConfig } from '../services/auth/src/config.js';
import { startAuth } from '../services/auth/src/app.js';
import { EnvReader } from '@partner/shared/config/env';
import { defaultAddress } from '@partner/shared/process/registry';
import { createLogger } from '@partner/shared/telemetry/logger';

const FORM = 'application/x-www-form-urlencoded';
let client: ClientCreds;
let token: string;

const stack = useStack(async (stack) => {
  await stack.startAll({ PRINCIPAL_CACHE_MS: '0' });
  client = await stack.createClient();
  token = await stack.token(client);
});

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

async function tokenError(init: Parameters<Stack['tokenRequest']>[0]) {
  const res = await stack.tokenRequest(init);
  return { status: res.status, headers: res.headers, body: (await res.json()) as { error: string; error_description: string } };
}

describe('token endpoint', () => {
  it('issues an ES256 access token with the documented fields and no-store', async () => {
    const res = await stack.tokenRequest({
      headers: { authorization: basic(client.clientId, client.clientSecret), 'content-type': FORM },
      body: form({ grant_type: 'client_credentials', scope: stack.scope }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(900);
    const header = decodeProtectedHeader(body.access_token as string);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(header.kid).toBeTruthy();
    const claims = decodeJwt(body.access_token as string);
    expect(claims).toMatchObject({
      iss: 'https://auth.uat.test',
      sub: client.clientId,
      aud: 'partner-submission-api',
      client_id: client.clientId,
      scope: stack.scope,
      tenant: client.tenant,
      partner_id: client.partnerId,
      permissions: ALL_PERMISSIONS,
    });
    expect(claims.exp! - claims.iat!).toBe(900);
    expect(claims.jti).toBeTruthy();
  });

  it('answers bad or missing client credentials with 401 invalid_client and WWW-Authenticate: Basic', async () => {
    const good = { 'content-type': FORM };
    const body = form({ grant_type: 'client_credentials', scope: stack.scope });
    const cases = [
      { headers: good, body },
      { headers: { ...good, authorization: basic(client.clientId, 'sk_wrong') }, body },
      { headers: { ...good, authorization: basic('cli_unknown', client.clientSecret) }, body },
      { headers: { ...good, authorization: 'Basic !!notbase64' }, body },
      // client_secret_post is not supported: HTTP Basic only.
      { headers: good, body: form({ grant_type: 'client_credentials', scope: stack.scope, client_id: client.clientId, client_secret: client.clientSecret }) },
    ];
    for (const c of cases) {
      const r = await tokenError(c);
      expect(r.status).toBe(401);
      expect(r.body.error).toBe('invalid_client');
      expect(r.headers.get('www-authenticate')).toMatch(/^Basic realm="/);
      expect(r.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('refuses a disabled client', async () => {
    const c = await stack.createClient();
    await stack.admin('client', 'disable', '--client', c.clientId);
    const r = await tokenError({
      headers: { authorization: basic(c.clientId, c.clientSecret), 'content-type': FORM },
      body: form({ grant_type: 'client_credentials', scope: stack.scope }),
    });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid_client');
  });

  it('answers other grant types with 400 unsupported_grant_type', async () => {
    const r = await tokenError({
      headers: { authorization: basic(client.clientId, client.clientSecret), 'content-type': FORM },
      body: form({ grant_type: 'password', scope: stack.scope, username: 'a', password: 'b' }),
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('unsupported_grant_type');
  });

  it('answers missing, unknown and several scopes with 400 invalid_scope', async () => {
    for (const scope of [undefined, 'api.elsewhere.test/access', `${stack.scope} ${stack.otherScope}`]) {
      const r = await tokenError({
        headers: { authorization: basic(client.clientId, client.clientSecret), 'content-type': FORM },
        body: form({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
      });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_scope');
      // A scope given but refused: the answer names the scopes of the environments this deployment
      // serves, and nothing else.
      if (scope) expect(r.body.error_description).toBe(`scope must be exactly one of: ${stack.scope}, ${stack.otherScope}`);
    }
  });

  it('names, on the defaults (as `npm start` runs it), only the scope of the one environment served (issue 49, 7)', async () => {
    const { AUTH_SCOPES: _given, ...defaults } = stack.env;
    const auth = await startAuth(readAuthConfig(new EnvReader(defaults)), { logger: createLogger('test', 'silent') });
    try {
      const served = `${defaultAddress('gateway', 'http')}/access`;
      const res = await fetch(`http://127.0.0.1:${auth.ports.http}/oauth2/token`, {
        method: 'POST',
        headers: { authorization: basic(client.clientId, client.clientSecret), 'content-type': FORM },
        body: form({ grant_type: 'client_credentials', scope: 'api.elsewhere.test/access' }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'invalid_scope', error_description: `scope must be exactly one of: ${served}` });
      const meta = (await (await fetch(`http://127.0.0.1:${auth.ports.http}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(meta.scopes_supported).toEqual([served]);
    } finally {
      await auth.stop();
    }
  });

  it('answers malformed requests with 400 invalid_request', async () => {
    const auth = { authorization: basic(client.clientId, client.clientSecret) };
    const cases = [
      { headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials' }) },
      { headers: { ...auth, 'content-type': FORM }, body: 'grant_type=client_credentials&grant_type=client_credentials' },
      { headers: { ...auth, 'content-type': FORM }, body: form({ scope: stack.scope }) },
    ];
    for (const c of cases) {
      const r = await tokenError(c);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_request');
      expect(typeof r.body.error_description).toBe('string');
    }
  });

  it('publishes RFC 8414 metadata and the JWKS', async () => {
    const meta = (await (await fetch(`${stack.authUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      issuer: 'https://auth.uat.test',
      token_endpoint: 'https://auth.uat.test/oauth2/token',
      jwks_uri: 'https://auth.uat.test/.well-known/jwks.json',
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic'],
    });
    expect(meta.scopes_supported).toEqual([stack.scope, stack.otherScope]);
    const jwks = (await (await fetch(`${stack.authUrl}/.well-known/jwks.json`)).json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const k of jwks.keys) {
      expect(k).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(k.d).toBeUndefined();
    }
  });
});

describe('gateway authentication', () => {
  let signingKey: { kid: string; key: CryptoKey };
  beforeAll(async () => {
    signingKey = await loadSigningKey(stack.services.auth!.pool!, Buffer.from(stack.env.AUTH_KEY_ENCRYPTION_KEY!, 'base64'));
  });

  const now = nowSeconds;
  const claims = (over: Record<string, unknown> = {}) => accessClaims(stack, { ...client, permissions: ALL_PERMISSIONS }, over);
  const forge = (over: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key: CryptoKey | Uint8Array = signingKey.key) =>
    signAccessToken(claims(over), key, { kid: signingKey.kid, ...header });
  const health = (t: string | undefined, headers: Record<string, string> = {}) =>
    stack.api('GET', '/v1/health', { ...(t ? { token: t } : {}), headers });

  it('accepts a token it signed itself (the forging helper is sound)', async () => {
    const r = await health(await forge());
    expect(r.status).toBe(200);
  });

  it('answers a missing or malformed Authorization header with 401 unauthenticated', async () => {
    for (const headers of [{}, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, { authorization: 'Bearer' }]) {
      const r = await health(undefined, headers);
      expect(r.status).toBe(401);
      expect(r.body.error).toMatchObject({ code: 'unauthenticated', retryable: false });
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="/);
    }
  });

  it.each([
    ['expired', () => forge({ iat: now() - 2000, exp: now() - 1000 })],
    ['not yet valid', () => forge({ nbf: now() + 600 })],
    ['wrong issuer', () => forge({ iss: 'https://evil.test' })],
    ['wrong audience', () => forge({ aud: 'another-api' })],
    ['not an access token (typ)', () => forge({}, { typ: 'JWT' })],
    ['missing claims', () => forge({ partner_id: undefined })],
    ['tampered payload', async () => {
      const [h, , s] = (await forge()).split('.');
      const payload = Buffer.from(JSON.stringify(claims({ partner_id: 'someone-else' }))).toString('base64url');
      return `${h}.${payload}.${s}`;
    }],
    ['unsigned (alg none)', async () => {
      const h = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: signingKey.kid })).toString('base64url');
      return `${h}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`;
    }],
    ['signed with an unknown key id', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      return forge({}, { kid: 'unknown-kid' }, privateKey);
    }],
    ['HS256 with the public key as the secret (key confusion)', async () => {
      const jwks = (await (await fetch(`${stack.authUrl}/.well-known/jwks.json`)).json()) as { keys: object[] };
      const secret = new TextEncoder().encode(JSON.stringify(jwks.keys[0]));
      return new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: signingKey.kid, typ: 'at+jwt' }).sign(secret);
    }],
    ['garbage', async () => 'not.a.jwt'],
  ])('answers a token that is %s with 401 invalid_token', async (_name, make) => {
    const r = await health(await make());
    expect(r.status).toBe(401);
    expect(r.body.error).toMatchObject({ code: 'invalid_token', retryable: false });
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/);
  });

  it("answers another environment's scope with 403 insufficient_scope naming this one", async () => {
    const other = await stack.token(client, stack.otherScope);
    const r = await health(other);
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('insufficient_scope');
    expect(r.headers.get('www-authenticate')).toBe(`Bearer realm="partner-api", error="insufficient_scope", scope="${stack.scope}"`);
    // The gateway serves one environment: it names that scope only, never another the token server knows.
    expect(r.body.error.message).toContain(stack.scope);
    expect(r.body.error.message).not.toContain(stack.otherScope);
  });

  it('keeps tokens of the previous key valid after a key rotation', async () => {
    const before = await stack.token(client);
    const rotated = await stack.admin('key', 'rotate');
    expect(rotated.retired).toContain(decodeProtectedHeader(before).kid);
    const after = await stack.token(client);
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);
    expect((await health(before)).status).toBe(200);
    expect((await health(after)).status).toBe(200);
    const jwks = (await (await fetch(`${stack.authUrl}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([rotated.kid, decodeProtectedHeader(before).kid]));
  });
});

describe('gateway routing and authorization', () => {
  const SUB = '01a1fe20-231c-7755-9783-c07fb0d8d2b4';
  const JOB = 'job_01a1fe20232d757b88dc6d4e542d67d7';
  const ATT = '01a1fe20-2344-72e8-9915-e8cd867e77cc';
  // Every operation of the seed with the permission it needs.
  const OPERATIONS: [string, string, string][] = [
    ['health/read', 'GET', '/v1/health'],
    ['policies/read', 'GET', '/v1/policies'],
    ['policies/read', 'GET', `/v1/policies/${SUB}`],
    ['submissions/read', 'GET', `/v1/submissions/${SUB}`],
    ['submissions/read', 'GET', `/v1/submissions/${SUB}/attachments`],
    ['submissions/read', 'GET', `/v1/submissions/${SUB}/attachments/${ATT}`],
    ['submissions/read', 'GET', `/v1/submissions/${SUB}/attachments/${ATT}/content`],
    ['submissions/write', 'POST', '/v1/submissions'],
    ['submissions/write', 'POST', `/v1/submissions/${SUB}/attachments`],
    ['submissions/write', 'DELETE', `/v1/submissions/${SUB}/attachments/${ATT}`],
    ['jobs/read', 'GET', `/v1/jobs/${JOB}`],
  ];

  it.each(OPERATIONS)('refuses %s operation %s %s to a client without it: 403 forbidden, before the body is read', async (permission, method, path) => {
    const c = await stack.createClient({ permissions: ALL_PERMISSIONS.filter((p) => p !== permission) });
    const t = await stack.token(c);
    const r = await stack.api(method, path, {
      token: t,
      ...(method === 'GET' ? {} : { headers: { 'content-type': 'application/json' }, body: '{not json' }),
    });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: { code: 'forbidden', message: expect.stringContaining(permission), retryable: false } });
  });

  it('resolves registered principals and refuses unregistered and other partners’ ones', async () => {
    const other = await stack.createClient({ tenant: client.tenant });
    await stack.admin('principal', 'add', '--partner', client.partnerId, '--tenant', client.tenant, '--principal', 'broker-7');
    await stack.admin('principal', 'add', '--partner', other.partnerId, '--tenant', other.tenant, '--principal', 'other-broker');

    const ok = await stack.api('GET', '/v1/health', { token, headers: { 'x-principal-id': 'broker-7' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: 'ok', tenant: client.tenant, partnerId: client.partnerId, principalId: 'broker-7' });

    for (const principal of ['nobody', 'other-broker', '', 'bad id with spaces']) {
      const r = await stack.api('GET', '/v1/health', { token, headers: { 'x-principal-id': principal } });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('principal_not_registered');
    }

    await stack.admin('principal', 'remove', '--partner', client.partnerId, '--principal', 'broker-7');
    const removed = await stack.api('GET', '/v1/health', { token, headers: { 'x-principal-id': 'broker-7' } });
    expect(removed.status).toBe(403);
  });

  it('answers unknown paths 404 and wrong methods 405 with Allow, in the envelope', async () => {
    const unknown = await stack.api('GET', '/v1/nothing-here', { token });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found', retryable: false });
    const wrong = await stack.api('DELETE', '/v1/health', { token });
    expect(wrong.status).toBe(405);
    expect(wrong.body.error.code).toBe('method_not_allowed');
    expect(wrong.headers.get('allow')).toContain('GET');
  });

  it('requires a token before anything else, even on unknown paths', async () => {
    const r = await stack.api('GET', '/v1/nothing-here');
    expect(r.status).toBe(401);
  });

  it('echoes a sane X-Request-Id and generates one otherwise', async () => {
    const echoed = await stack.api('GET', '/v1/health', { token, headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const generated = await stack.api('GET', '/v1/health', { token, headers: { 'x-request-id': 'bad id with spaces and /slashes/' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const unauth = await stack.api('GET', '/v1/health');
    expect(unauth.headers.get('x-request-id')).toBeTruthy();
    expect(echoed.headers.get('cache-control')).toBe('no-store');
    expect(echoed.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('logs', () => {
  it('never contain a client secret, a token or an Authorization header', async () => {
    await stack.api('GET', '/v1/health', { token });
    await stack.api('GET', '/v1/health', { token: `${token}x` });
    const all = stack.logs.join('\n');
    expect(stack.logs.length).toBeGreaterThan(10);
    expect(all).not.toContain(client.clientSecret);
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.split('.')[2]!);
    expect(all.toLowerCase()).not.toContain('bearer ');
    expect(all).not.toContain(Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64'));
  });
});
