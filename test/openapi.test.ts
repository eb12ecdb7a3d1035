// The OpenAPI reference: served without a token for this environment (servers, token URL, scope),
// lint-clean as served (Redocly's recommended rules), in step with the routes the gateway registers
// and the error codes it knows, and a conformance check that really refuses what it does not describe.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Router from '@koa/router';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ERROR_CODES } from '@partner/shared/domain/errors';
import { RECEIPT_KEYS_PATH } from '../services/gateway/src/resources/receipts/routes.js';
import { API_VERSION } from '../services/gateway/src/openapi/document.js';
import { RESOURCES } from '../services/gateway/src/resources/index.js';
import type { RouteDeps } from '../services/gateway/src/resources/deps.js';
import type { GatewayState } from '../services/gateway/src/context.js';
import { ERROR_CODE_TABLE } from '../services/gateway/src/openapi/errors.js';
import { checkResponse, conformance } from './support/conformance.js';
import { ROOT, type ApiResponse } from './support/stack.js';
import { useStack } from './support/use-stack.js';

const stack = useStack(async (stack) => {
  await stack.startAll();
});

type Doc = {
  openapi: string;
  servers: { url: string }[];
  security: Record<string, string[]>[];
  paths: Record<string, Record<string, { operationId?: string; security?: unknown[]; responses: Record<string, unknown> }>>;
  components: { securitySchemes: Record<string, { type: string; flows: { clientCredentials: { tokenUrl: string; scopes: Record<string, string> } } }> };
};

describe('GET /v1/openapi.json', () => {
  it("is served without a token, for this environment's addresses and scope", async () => {
    const r = await stack.api('GET', '/v1/openapi.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.headers.get('x-request-id')).toBeTruthy();
    const doc = r.body as Doc;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: stack.baseUrl, description: 'The uat environment.' }]);
    const scheme = doc.components.securitySchemes.partnerOAuth!;
    expect(scheme.type).toBe('oauth2');
    expect(scheme.flows.clientCredentials.tokenUrl).toBe(`${stack.env.AUTH_ISSUER}/oauth2/token`);
    // One scope, the environment's; no per-operation permissions anywhere.
    expect(Object.keys(scheme.flows.clientCredentials.scopes)).toEqual([stack.scope]);
    expect(doc.security).toEqual([{ partnerOAuth: [stack.scope] }]);
    expect(r.text).not.toMatch(/(health|policies|submissions|jobs)\/(read|write)/);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'parameters') continue;
        expect(op.operationId, `${method} ${path}`).toBeTruthy();
        // The documents served without a token: the index, this one and the receipt keys.
        if (path === '/' || path === '/v1/openapi.json' || path === '/.well-known/receipt-keys.json') expect(op.security).toEqual([]);
        else {
          expect(op.security, `${method} ${path} uses the global scope`).toBeUndefined();
          expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403', '429', '500', '503']));
        }
      }
    }
  });

  it('answers other methods with 405 and Allow, still without a token', async () => {
    const r = await stack.api('POST', '/v1/openapi.json', { json: {} });
    expect(r.status).toBe(405);
    expect(r.body.error.code).toBe('method_not_allowed');
    expect(r.headers.get('allow')).toBe('GET, HEAD');
  });

  it('is served at its exact path only: with a trailing slash it is an unknown path, as every path', async () => {
    const anonymous = await stack.api('GET', '/v1/openapi.json/');
    expect(anonymous.status).toBe(401);
    const token = await stack.token(await stack.createClient());
    const r = await stack.api('GET', '/v1/openapi.json/', { token });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
  });

  it('describes HEAD and OPTIONS on listed paths as the gateway answers them', async () => {
    const token = await stack.token(await stack.createClient());
    const head = await stack.api('HEAD', '/v1/health', { token });
    expect(head.status).toBe(200);
    const options = await stack.api('OPTIONS', '/v1/policies', { token });
    expect(options.status).toBe(200);
    expect(options.headers.get('allow')).toContain('GET');
  });

  it('lints clean with Redocly as served', async () => {
    const r = await fetch(`${stack.gatewayUrl}/v1/openapi.json`);
    const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, await r.text());
      const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
        execFile(
          join(ROOT, 'node_modules/.bin/redocly'),
          ['lint', '--format=stylish', file],
          { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, timeout: 50_000 },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
        );
      });
      expect(code, output).toBe(0);
      // Clean means no warnings either (Redocly prints "You have N warnings" when there are some).
      expect(output, output).toContain('Your API description is valid');
      expect(output, output).not.toMatch(/You have \d+ warning/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('GET / (issue 49, 7)', () => {
  it('answers without a token an index naming the version, the document, the token endpoint, the scope and the docs', async () => {
    const r = await stack.api('GET', '/');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body).toEqual({
      name: 'Partner Submission API',
      apiVersion: API_VERSION,
      environment: 'uat',
      openapi: `${stack.baseUrl}/v1/openapi.json`,
      tokenUrl: `${stack.env.AUTH_ISSUER}/oauth2/token`,
      scope: stack.scope,
      docs: `${stack.baseUrl}/v1/openapi.json`,
    });
    // What it names is what the document and the token server say.
    const doc = (await stack.api('GET', '/v1/openapi.json')).body as Doc & { info: { version: string } };
    expect(doc.info.version).toBe(r.body.apiVersion);
    expect(doc.components.securitySchemes.partnerOAuth!.flows.clientCredentials).toMatchObject({ tokenUrl: r.body.tokenUrl, scopes: { [r.body.scope]: expect.any(String) } });
    expect(doc.paths['/']!.get!.security).toEqual([]);
    expect((await stack.api('HEAD', '/')).status).toBe(200);
  });

  it('answers other methods with 405 and Allow, and only its exact path', async () => {
    const post = await stack.api('POST', '/', { json: {} });
    expect(post.status).toBe(405);
    expect(post.body.error.code).toBe('method_not_allowed');
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await stack.api('GET', '/index.json')).status).toBe(401);
  });
});

describe('the document and the gateway stay in step', () => {
  it('lists exactly the operations the gateway routes', () => {
    const router = new Router<GatewayState>({ prefix: '/v1' });
    const deps = { config: { grpcTimeoutMs: 1000, jsonLimitBytes: 1024, environment: 'uat' }, clients: {}, waiters: {}, guard: () => async (_ctx: unknown, next: () => Promise<void>) => next() } as unknown as RouteDeps;
    for (const resource of RESOURCES) resource.routes?.(router, deps);
    const routed = new Set<string>();
    for (const layer of router.stack) {
      for (const method of layer.methods) {
        if (method !== 'HEAD') routed.add(`${method} ${layer.path.replace(/:[A-Za-z]+/g, '{}')}`);
      }
    }
    const documented = new Set<string>();
    for (const [path, item] of Object.entries((conformance().doc as Doc).paths)) {
      for (const method of Object.keys(item)) {
        // The public documents are answered before the router (openapi/route.ts, resources/receipts/routes.ts receiptKeysRoute).
        if (method !== 'parameters' && method !== 'head' && !['/', '/v1/openapi.json', RECEIPT_KEYS_PATH].includes(path)) documented.add(`${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`);
      }
    }
    expect([...documented].sort()).toEqual([...routed].sort());
  });

  it("says in eventTypes' schema what the route enforces: [\"*\"] alone or a list of event types (Ajv on the served document)", async () => {
    const doc = (await stack.api('GET', '/v1/openapi.json')).body as { components: { schemas: Record<string, object> } };
    const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false });
    const accepts = (name: string, body: unknown) => ajv.validate(doc.components.schemas[name]!, body);
    for (const name of ['WebhookEndpointCreate', 'WebhookEndpointUpdate']) {
      const body = (eventTypes: unknown) => ({ url: 'https://hooks.example.com/x', eventTypes });
      for (const good of [['*'], ['job.failed'], ['job.failed', 'submission.created']]) expect(accepts(name, body(good)), `${name} ${JSON.stringify(good)}`).toBe(true);
      for (const bad of [['*', 'job.failed'], ['job.failed', '*'], ['*', '*'], [], ['job.failed', 'job.failed'], ['nope']]) {
        expect(accepts(name, body(bad)), `${name} ${JSON.stringify(bad)}`).toBe(false);
      }
    }
  });

  it('documents every error code the gateway knows', () => {
    const documented = ERROR_CODE_TABLE.map(([code]) => code);
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      expect(documented, code).toContain(code);
      const row = ERROR_CODE_TABLE.find(([c]) => c === code)!;
      expect([row[1], row[2]], code).toEqual([info.http, info.retryable]);
    }
  });
});

describe('conformance check', () => {
  const ok = (over: Partial<ApiResponse> & { headers?: Headers } = {}): ApiResponse => {
    const body = over.body ?? { status: 'ok', tenant: 't', partnerId: 'p', principalId: null };
    return {
      status: 200,
      headers: new Headers({ 'x-request-id': 'r-1', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-type': 'application/json; charset=utf-8' }),
      body,
      text: JSON.stringify(body),
      ...over,
    };
  };

  it('accepts a documented response', () => {
    expect(() => checkResponse('GET', '/v1/health', ok())).not.toThrow();
  });

  it.each([
    ['an undocumented status', () => checkResponse('GET', '/v1/health', ok({ status: 418 })), /status 418 is not documented/],
    ['a missing X-Request-Id', () => {
      const r = ok();
      r.headers.delete('x-request-id');
      checkResponse('GET', '/v1/health', r);
    }, /required header X-Request-Id is missing/],
    ['a body that does not match', () => checkResponse('GET', '/v1/health', ok({ body: { status: 'ok', tenant: 't' } })), /must have required property 'partnerId'/],
    ['an undocumented field', () => checkResponse('GET', '/v1/health', ok({ body: { status: 'ok', tenant: 't', partnerId: 'p', principalId: null, extra: 1 } })), /additional properties/],
    ['an unknown path that answers 200', () => checkResponse('GET', '/v1/secret', ok()), /unlisted path \/v1\/secret: status 200 is not documented/],
    ['an undocumented method', () => checkResponse('PUT', '/v1/health', ok()), /PUT \/v1\/health \(not an operation\)/],
    ['a 202 without Location', () => {
      const body = { id: `job_${'a'.repeat(32)}`, status: 'accepted', statusUrl: 'https://api.uat.test/v1/jobs/x' };
      const r = ok({ status: 202, body, text: JSON.stringify(body) });
      r.headers.set('retry-after', '5');
      r.headers.set('vary', 'Prefer');
      checkResponse('POST', '/v1/submissions', r);
    }, /required header Location is missing/],
    ['a Content-Type it does not list', () => {
      const r = ok();
      r.headers.set('content-type', 'text/html');
      checkResponse('GET', '/v1/health', r);
    }, /Content-Type text\/html is not documented/],
  ])('refuses %s', (_name, run, message) => {
    expect(run).toThrow(message);
  });
});
