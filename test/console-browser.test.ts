// The partner console in a real browser (issue 46): Debian's Chromium driven by playwright-core
// (no browser download) against the real stack. One browser for the file, a fresh context (cookie
// jar) per session. Screenshots of every page, at a laptop and a phone width, go to
// artifacts/console/ (git-ignored; CI keeps them, docs/partners.md links them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import type { ClientCreds } from './support/stack.js';
import { ROOT } from './support/stack.js';
import { useStack } from './support/use-stack.js';
import { PRODUCT, submissionBody } from './support/fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = `${ROOT}artifacts/console/`;
const PAGES = ['Overview', 'Requests', 'Jobs', 'Submissions', 'Quotes', 'Policies', 'Events', 'Webhooks'] as const;

let client: ClientCreds;
let token: string;
let submissionId: string;
let browser: Browser;

const stack = useStack(async (s) => {
  await s.startAll();
  await s.admin('product', 'add', '--id', PRODUCT, '--name', 'Console product');
  client = await s.createClient({ tenant: 'acme-insurance', partner: 'northwind-brokers' });
  token = await s.token(client);
  const created = await s.api('POST', '/v1/submissions', { token, headers: { prefer: 'wait=20' }, json: submissionBody(undefined, 'Contoso Bakery LLC') });
  expect(created.status).toBe(200);
  submissionId = created.body.submissionId;
  // An endpoint nothing listens at: its deliveries fail (the Overview's failing endpoints, the Webhooks page).
  const endpoint = await s.api('POST', '/v1/webhook-endpoints', { token, headers: { prefer: 'wait=20' }, json: { url: 'http://127.0.0.1:9/hooks', eventTypes: ['*'], description: 'Closed port' } });
  expect(endpoint.status).toBe(200);
  await s.api('POST', '/v1/submissions', { token, headers: { prefer: 'wait=20' }, json: submissionBody('sandbox:fail=unknown_product', 'Failing Foods Inc') });
});

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

const local = (url: string): string => url.replace(stack.baseUrl, stack.gatewayUrl);

async function mintLink(readOnly = false): Promise<string> {
  const r = await stack.api('POST', '/v1/console/sessions', { token, json: { readOnly } });
  expect(r.status).toBe(201);
  return local(r.body.url as string);
}

/** A fresh browser context signed in through a new link; the page is on the console. */
async function signedIn(readOnly = false, viewport = { width: 1280, height: 800 }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(await mintLink(readOnly));
  await page.waitForSelector('body[data-ready]');
  return { context, page };
}

async function show(page: Page, path: string): Promise<void> {
  await page.goto(`${stack.gatewayUrl}${path}`);
  await page.waitForSelector('body[data-ready]');
}

async function heldJob(): Promise<string> {
  const r = await stack.api('POST', '/v1/submissions', { token, json: submissionBody('sandbox:hold=60', 'Held Harbour Ltd') });
  expect(r.status).toBe(202);
  return r.body.id as string;
}

describe('the console in Chromium', () => {
  it('opens from a link once, names the tenant and partner, and keeps every secret out of reach of scripts', async () => {
    const link = await mintLink();
    const context = await browser.newContext();
    const page = await context.newPage();
    const first = await page.goto(link);
    await page.waitForSelector('body[data-ready="true"]');
    expect(new URL(page.url()).pathname).toBe('/console/');
    expect(page.url()).not.toContain('token');
    expect(first?.status()).toBe(200);
    const csp = first?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    await expect(page.locator('#who').textContent()).resolves.toContain('Tenant acme-insurance · Partner northwind-brokers');
    for (const name of PAGES) expect(await page.getByRole('link', { name, exact: true }).count()).toBe(1);

    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: '__Host-console_session', httpOnly: true, sameSite: 'Strict', secure: true, path: '/' });
    const visible = await page.evaluate(() => ({ cookie: document.cookie, local: localStorage.length, session: sessionStorage.length, html: document.documentElement.outerHTML }));
    expect(visible.cookie).toBe('');
    expect(visible.local).toBe(0);
    expect(visible.session).toBe(0);
    const source = (await (await page.request.get(`${stack.gatewayUrl}/console/`)).text()) + visible.html;
    for (const secret of [cookie!.value, token, client.clientSecret]) expect(source).not.toContain(secret);
    // An injected inline script does not run (the CSP has no 'unsafe-inline').
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = true';
      document.body.append(s);
    });
    expect(await page.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined();

    // The same link again, in another browser: the plain page, no session.
    const other = await browser.newContext();
    const again = await other.newPage();
    const second = await again.goto(link);
    expect(second?.status()).toBe(410);
    await expect(again.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('already been used');
    expect(await other.cookies()).toEqual([]);
    await other.close();
    await context.close();
  });

  it('cancels a held job from the Jobs page', async () => {
    const jobId = await heldJob();
    const { context, page } = await signedIn();
    await show(page, `/console/jobs?id=${jobId}`);
    expect(await page.getByTestId('job-status').textContent()).toBe('processing');
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByTestId('job-status').filter({ hasText: 'canceled' }).waitFor();
    expect((await stack.api('GET', `/v1/jobs/${jobId}`, { token })).body.status).toBe('canceled');
    await context.close();
  });

  it('a read-only session shows no Cancel and gets 403 on a forged mutation', async () => {
    const jobId = await heldJob();
    const { context, page } = await signedIn(true);
    await expect(page.locator('#who').textContent()).resolves.toContain('read-only');
    await show(page, `/console/jobs?id=${jobId}`);
    expect(await page.getByTestId('job-status').textContent()).toBe('processing');
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    await show(page, '/console/jobs');
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    const forged = await page.evaluate(async (id) => {
      const { csrfToken } = (await (await fetch('/console/session')).json()) as { csrfToken: string };
      const withToken = await fetch(`/v1/jobs/${id}/cancel`, { method: 'POST', headers: { 'x-csrf-token': csrfToken } });
      const without = await fetch(`/v1/jobs/${id}/cancel`, { method: 'POST' });
      return [withToken.status, without.status];
    }, jobId);
    expect(forged).toEqual([403, 403]);
    expect((await stack.api('GET', `/v1/jobs/${jobId}`, { token })).body.status).toBe('processing');
    await stack.api('POST', `/v1/jobs/${jobId}/cancel`, { token });
    await context.close();
  });

  it('shows a receipt as verified, and as not verified when the receipt keys are swapped', async () => {
    const { context, page } = await signedIn();
    await show(page, `/console/submissions?id=${submissionId}`);
    const receipt = page.locator('[data-receipt-seq]').first();
    expect(await receipt.textContent()).toBe('Verified');
    await expect(page.getByRole('heading', { name: /^Created$/ }).count()).resolves.toBe(1);
    await expect(page.getByRole('heading', { name: /^Clearance: cleared$/ }).count()).resolves.toBe(1);

    const real = (await (await fetch(`${stack.gatewayUrl}/.well-known/receipt-keys.json`)).json()) as { keys: Record<string, unknown>[] };
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const swapped = { keys: real.keys.map((k) => ({ ...k, x: stranger.x, y: stranger.y })) };
    await context.route('**/.well-known/receipt-keys.json', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(swapped) }));
    await show(page, `/console/submissions?id=${submissionId}`);
    expect(await page.locator('[data-receipt-seq]').first().textContent()).toMatch(/^Not verified/);
    await context.close();
  });

  it('every page passes axe with no serious or critical violation, at a laptop and a phone width (screenshots kept)', async () => {
    for (const [label, viewport] of [['laptop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]] as const) {
      const { context, page } = await signedIn(false, viewport);
      for (const name of PAGES) {
        await page.getByRole('link', { name, exact: true }).click();
        await page.waitForURL(`**/console/${name.toLowerCase()}`);
        await page.waitForSelector('body[data-ready="true"]');
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(name);
        expect(await page.locator('#who').textContent()).toContain('Partner northwind-brokers');
        const { violations } = await new AxeBuilder({ page }).analyze();
        const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(bad.map((v) => `${name} (${label}): ${v.id} ${v.help} ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
        await page.screenshot({ path: `${SHOTS}${name.toLowerCase()}-${label}.png`, fullPage: true });
      }
      // The detail pages too: a submission's timeline and a job.
      await show(page, `/console/submissions?id=${submissionId}`);
      const { violations } = await new AxeBuilder({ page }).analyze();
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
      await page.screenshot({ path: `${SHOTS}submission-timeline-${label}.png`, fullPage: true });
      await context.close();
    }
  });
});
