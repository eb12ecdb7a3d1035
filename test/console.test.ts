// The partner console over plain HTTP (API.md "Partner console"): POST /v1/console/sessions mints a
// single-use link (201, requests/read); opening it sets the session cookie (HttpOnly, SameSite=Strict,
// Secure with an https base URL) and sends the browser on to a URL without the token; a used, expired or forged
// link gets the plain page and no cookie; the cookie authenticates /v1 as the minting client (its
// tenant, partner and permissions), every mutation needs the CSRF token, a read-only session refuses
// mutations, and a revoked client's cookie is back at the "session ended" page. The browser tests
// are in console-browser.test.ts.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT, type ClientCreds } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { PRODUCT, submissionBody } from './support/fixtures.js';

let client: ClientCreds;
let token: string;

const stack = useStack(async (s) => {
  await s.startAll({}, { dispatcher: false });
  await s.admin('product', 'add', '--id', PRODUCT, '--name', 'Console product');
  client = await s.createClient();
  token = await s.token(client);
});

/** A console path on the gateway (the link's origin is the public base URL). */
const local = (url: string): string => url.replace(stack.baseUrl, stack.gatewayUrl);
const raw = (path: string, init: RequestInit = {}): Promise<Response> => fetch(`${stack.gatewayUrl}${path}`, { redirect: 'manual', ...init });

async function mint(t = token, body?: unknown): Promise<{ url: string; expiresAt: string; readOnly: boolean }> {
  const r = await stack.api('POST', '/v1/console/sessions', { token: t, ...(body === undefined ? {} : { json: body }) });
  expect(r.status).toBe(201);
  return r.body;
}

/** Opens a link: the cookie pair ("name=value") it set. */
async function open(url: string): Promise<{ res: Response; cookie: string; setCookie: string }> {
  const res = await fetch(local(url), { redirect: 'manual' });
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { res, cookie: setCookie.split(';')[0] ?? '', setCookie };
}

async function session(readOnly = false, t = token): Promise<{ cookie: string; csrf: string }> {
  const { cookie } = await open((await mint(t, readOnly ? { readOnly: true } : undefined)).url);
  const s = await raw('/console/session', { headers: { cookie } });
  expect(s.status).toBe(200);
  return { cookie, csrf: ((await s.json()) as { csrfToken: string }).csrfToken };
}

describe('POST /v1/console/sessions', () => {
  it('answers 201 with a single-use link valid 10 minutes, needs requests/read, and refuses a bad body', async () => {
    const before = Date.now();
    const link = await mint();
    expect(link.url).toMatch(/^https:\/\/api\.uat\.test\/console\/open\?token=cst_[A-Za-z0-9_-]{43}$/);
    expect(link.readOnly).toBe(false);
    const ttl = Date.parse(link.expiresAt) - before;
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(601_000);
    expect((await mint(token, { readOnly: true })).readOnly).toBe(true);

    const bad = await stack.api('POST', '/v1/console/sessions', { token, json: { readOnly: 'yes', extra: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['extra', 'readOnly']);

    const narrow = await stack.createClient({ permissions: ['jobs/read'] });
    const refused = await stack.api('POST', '/v1/console/sessions', { token: await stack.token(narrow) });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
  });
});

describe('opening a link', () => {
  it('sets an HttpOnly, SameSite=Strict, Secure cookie once and sends the browser on to a URL without the token', async () => {
    const link = await mint();
    const { res, setCookie } = await open(link.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('refresh')).toBe('0; url=/console/overview');
    expect(await res.text()).toContain('<meta http-equiv="refresh" content="0; url=/console/overview">');
    expect(setCookie).toMatch(/^__Host-console_session=css_[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/; path=\//i);
    expect(setCookie).toMatch(/; httponly/i);
    expect(setCookie).toMatch(/; samesite=strict/i);
    expect(setCookie).toMatch(/; secure/i);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");

    // A HEAD (a link checker) neither opens nor uses up a link.
    const other = await mint();
    const head = await fetch(local(other.url), { method: 'HEAD' });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('GET');
    expect((await open(other.url)).setCookie).toMatch(/^__Host-console_session=/);

    const again = await open(link.url);
    expect(again.res.status).toBe(410);
    expect(again.setCookie).toBe('');
    const page = await again.res.text();
    expect(page).toContain('already been used');
    expect(page).toContain('POST /v1/console/sessions');
  });

  it('answers a forged link and an expired one with the plain page and no cookie', async () => {
    const forged = await open(`${stack.baseUrl}/console/open?token=cst_${'A'.repeat(43)}`);
    expect(forged.res.status).toBe(404);
    expect(forged.setCookie).toBe('');
    expect(await forged.res.text()).toContain('not valid');
    const garbage = await open(`${stack.baseUrl}/console/open?token=<script>`);
    expect(garbage.res.status).toBe(404);

    const link = await mint();
    await stack.sql("UPDATE auth.console_links SET expires_at = now() - interval '1 second' WHERE used_at IS NULL");
    const expired = await open(link.url);
    expect(expired.res.status).toBe(410);
    expect(expired.setCookie).toBe('');
    expect(await expired.res.text()).toContain('expired');
  });
});

describe('the link exchange, attacked (docs/security.md, issue 48 item 8)', () => {
  it('sends the browser only to the console\'s own page, whatever redirect parameter or crafted path comes with the link', async () => {
    const crafted = ['&next=https://evil.example', '&redirect=//evil.example', '&return=%2F%2Fevil.example%2Fx', '&returnTo=/\\evil.example', '&url=javascript:alert(1)'];
    for (const extra of crafted) {
      const link = await mint();
      const { res, setCookie } = await open(`${link.url}${extra}`);
      expect(res.status, extra).toBe(200);
      expect(setCookie, extra).toMatch(/^__Host-console_session=css_/);
      expect(res.headers.get('refresh'), extra).toBe('0; url=/console/overview');
      expect(res.headers.get('location'), extra).toBeNull();
      const page = await res.text();
      expect(page, extra).not.toContain('evil');
      expect(page, extra).not.toContain('javascript:');
    }
    // A crafted path is not the exchange: refused (404, or 401 outside /console), no cookie, no redirect.
    for (const path of ['/console/open//evil.example', '/console/open/https://evil.example', '//evil.example/console/open']) {
      const link = await mint();
      const query = new URL(link.url).search;
      const r = await raw(`${path}${query}`);
      expect([401, 404], path).toContain(r.status);
      expect(r.headers.get('set-cookie'), path).toBeNull();
      expect(r.headers.get('refresh'), path).toBeNull();
      expect(r.headers.get('location'), path).toBeNull();
      // The link was not used up by the crafted path.
      expect((await open(link.url)).res.status, path).toBe(200);
    }
  });

  it('gives a new session id to a browser that already carries one (no fixation), and accepts no planted cookie value', async () => {
    const attacker = await stack.createClient();
    const planted = await session(false, await stack.token(attacker));
    // The victim opens their own link in a browser where the attacker planted their valid session.
    const link = await mint();
    const res = await fetch(local(link.url), { redirect: 'manual', headers: { cookie: planted.cookie } });
    expect(res.status).toBe(200);
    const fresh = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(fresh).toMatch(/^__Host-console_session=css_[A-Za-z0-9_-]{43}$/);
    expect(fresh).not.toBe(planted.cookie);
    const victim = (await (await raw('/console/session', { headers: { cookie: fresh } })).json()) as { clientId: string };
    expect(victim.clientId).toBe(client.clientId);
    // The planted id is still only the attacker's session: it never became the victim's.
    const still = (await (await raw('/console/session', { headers: { cookie: planted.cookie } })).json()) as { clientId: string };
    expect(still.clientId).toBe(attacker.clientId);

    // A cookie value the service did not issue is accepted nowhere.
    const unknown = `__Host-console_session=css_${'A'.repeat(43)}`;
    for (const path of ['/console/session', '/console/overview', '/v1/health', '/v1/jobs']) {
      expect((await raw(path, { headers: { cookie: unknown } })).status, path).toBe(401);
    }
  });
});

describe('the session cookie', () => {
  it('authenticates /v1 as the minting client and serves the pages under a strict CSP', async () => {
    const { cookie, csrf } = await session();
    const health = await raw('/v1/health', { headers: { cookie } });
    expect(health.status).toBe(200);
    const mine = (await (await stack.api('GET', '/v1/health', { token })).body) as { tenant: string; partnerId: string };
    expect(await health.json()).toMatchObject({ tenant: mine.tenant, partnerId: mine.partnerId });

    const who = (await (await raw('/console/session', { headers: { cookie } })).json()) as Record<string, unknown>;
    expect(who).toMatchObject({ tenant: mine.tenant, partnerId: mine.partnerId, clientId: client.clientId, readOnly: false, csrfToken: csrf });
    expect(JSON.stringify(who)).not.toContain(cookie.split('=')[1]);

    for (const page of ['/console/', '/console/overview', '/console/requests', '/console/jobs', '/console/submissions', '/console/quotes', '/console/policies', '/console/events', '/console/webhooks']) {
      const r = await raw(page, { headers: { cookie } });
      expect(r.status, page).toBe(200);
      const csp = r.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      const html = await r.text();
      expect(html).not.toContain(cookie.split('=')[1]);
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    }
    const asset = await raw('/console/assets/app.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await raw('/console/assets/..%2f..%2fpackage.json')).status).toBe(404);
    // A console session cannot mint another link.
    const minted = await raw('/v1/console/sessions', { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
    expect(minted.status).toBe(403);
  });

  it('requires the CSRF token on every mutation, and a read-only session refuses mutations', async () => {
    const { cookie, csrf } = await session();
    const submit = (headers: Record<string, string>) =>
      raw('/v1/submissions', { method: 'POST', headers: { cookie, 'content-type': 'application/json', ...headers }, body: JSON.stringify(submissionBody('sandbox:hold=30')) });
    const without = await submit({});
    expect(without.status).toBe(403);
    expect(((await without.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    expect((await submit({ 'x-csrf-token': 'nope' })).status).toBe(403);
    const accepted = await submit({ 'x-csrf-token': csrf });
    expect(accepted.status).toBe(202);
    const job = ((await accepted.json()) as { id: string }).id;
    const cancel = await raw(`/v1/jobs/${job}/cancel`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
    expect(cancel.status).toBe(200);

    const ro = await session(true);
    expect((await raw('/v1/jobs', { headers: { cookie: ro.cookie } })).status).toBe(200);
    const refused = await raw('/v1/submissions', {
      method: 'POST',
      headers: { cookie: ro.cookie, 'x-csrf-token': ro.csrf, 'content-type': 'application/json' },
      body: JSON.stringify(submissionBody()),
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('read-only');
  });

  it('ends with sign-out, and with the client\'s revocation: the pages show the plain page again', async () => {
    const out = await session();
    expect((await raw('/console/logout', { method: 'POST', headers: { cookie: out.cookie } })).status).toBe(403);
    expect((await raw('/console/logout', { method: 'POST', headers: { cookie: out.cookie, 'x-csrf-token': out.csrf } })).status).toBe(204);
    expect((await raw('/v1/health', { headers: { cookie: out.cookie } })).status).toBe(401);

    const other = await stack.createClient();
    const otherToken = await stack.token(other);
    const s = await session(false, otherToken);
    expect((await raw('/console/jobs', { headers: { cookie: s.cookie } })).status).toBe(200);
    await stack.admin('client', 'revoke-tokens', '--client', other.clientId);
    const ended = await raw('/console/jobs', { headers: { cookie: s.cookie } });
    expect(ended.status).toBe(401);
    expect(await ended.text()).toContain('session has ended');
    const api = await raw('/v1/health', { headers: { cookie: s.cookie } });
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('unauthenticated');
    // Without any cookie: the same plain page.
    expect((await raw('/console/overview')).status).toBe(401);
  });
});

describe('partner console', () => {
  it('prints a single-use link (read-only with --read-only) and opens no browser when piped', async () => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: '/nonexistent',
      PARTNER_BASE_URL: stack.gatewayUrl,
      PARTNER_AUTH_URL: stack.authUrl,
      PARTNER_CLIENT_ID: client.clientId,
      PARTNER_CLIENT_SECRET: client.clientSecret,
      PARTNER_SCOPE: stack.scope,
    };
    const run = promisify(execFile);
    const out = await run(process.execPath, [`${ROOT}sdk/cli/dist/main.js`, 'console', '--read-only'], { env });
    const link = JSON.parse(out.stdout) as { url: string; expiresAt: string; readOnly: boolean };
    expect(link.readOnly).toBe(true);
    expect(out.stderr).toContain('works once');
    const { cookie } = await open(link.url);
    const who = (await (await raw('/console/session', { headers: { cookie } })).json()) as { readOnly: boolean; clientId: string };
    expect(who).toMatchObject({ readOnly: true, clientId: client.clientId });
  });
});
