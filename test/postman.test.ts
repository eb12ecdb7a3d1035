// The Postman collection (docs/postman/), generated from the OpenAPI document by Postman's converter
// (scripts/gen-postman.mjs, `npm run postman`): committed in step with the API, one request per
// operation, OAuth 2.0 client credentials, and its requests accepted by the real API as they stand.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Collection, type Item } from 'postman-collection';
import { buildOpenApiDocument } from '../services/gateway/src/openapi/document.js';
import { PRODUCT, provision } from './support/fixtures.js';
import { useStack } from './support/use-stack.js';

// A plain ES module script (`npm run postman` runs it); its two exports, typed here.
const { generateCollection, COLLECTION_FILE } = (await import('../scripts/gen-postman.mjs')) as unknown as { generateCollection(): Promise<string>; COLLECTION_FILE: string };

const committed = readFileSync(COLLECTION_FILE, 'utf8');
const collection = new Collection(JSON.parse(committed));
const items: Item[] = [];
collection.forEachItem((i) => void items.push(i));
/** `GET /v1/policies/{policyId}` for a collection request (its path keeps `:policyId`). */
const templateOf = (item: Item) => {
  const raw = item.toJSON() as { request: { method: string; url: { path: string[] } } };
  return `${raw.request.method} /${raw.request.url.path.map((s) => s.replace(/^:(.+)$/, '{$1}')).join('/')}`;
};

describe('the committed Postman collection', () => {
  it('is what the converter makes of the current OpenAPI document (run `npm run postman` after an API change)', async () => {
    expect(await generateCollection(), `${COLLECTION_FILE} is stale: run npm run postman`).toBe(committed);
  });

  it('has one request per operation of the OpenAPI document, named by its summary', () => {
    const doc = buildOpenApiDocument({ baseUrl: 'https://api.uat.example.com', tokenUrl: 'https://auth.uat.example.com/oauth2/token', scope: 'api.uat.example.com/access', environment: 'uat' }) as {
      paths: Record<string, Record<string, { summary?: string }>>;
    };
    // The console's browser routes are left out of the collection (scripts/gen-postman.mjs withoutBrowserRoutes).
    const apiPaths = Object.entries(doc.paths).filter(([path]) => path !== '/console' && !path.startsWith('/console/'));
    const operations = apiPaths.flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => method !== 'parameters')
        .map(([method, op]) => ({ template: `${method.toUpperCase()} ${path}`, summary: op.summary })),
    );
    expect(items.map(templateOf).sort()).toEqual(operations.map((o) => o.template).sort());
    for (const op of operations) expect(items.find((i) => templateOf(i) === op.template)?.name).toBe(op.summary);
  });

  it('authenticates with OAuth 2.0 client credentials against the token URL, and addresses the API by {{baseUrl}}', () => {
    const auth = collection.auth!.toJSON() as { type: string; oauth2: { key: string; value: string }[] };
    expect(auth.type).toBe('oauth2');
    expect(Object.fromEntries(auth.oauth2.map((p) => [p.key, p.value]))).toMatchObject({
      grant_type: 'client_credentials',
      accessTokenUrl: 'https://auth.uat.example.com/oauth2/token',
      scope: 'api.uat.example.com/access',
    });
    expect(collection.variables.toObject()).toEqual({ baseUrl: 'https://api.uat.example.com' });
    // Every path under /v1 or /.well-known, and the index at / (GET /).
    for (const item of items) expect(/^\{\{baseUrl\}\}\/((v1|\.well-known)\/|$)/.test(item.request.url.toString()), item.request.url.toString()).toBe(true);
  });
});

describe("the collection's requests against the API", () => {
  let token: string;
  const stack = useStack(async (stack) => {
    await stack.startAll();
    token = await provision(stack);
  });

  /** Sends a collection request as Postman would: its headers and body, {{baseUrl}} resolved, a token. */
  const send = (item: Item, body?: (b: Record<string, unknown>) => Record<string, unknown>) => {
    const headers = new Headers({ authorization: `Bearer ${token}` });
    item.request.headers.each((h) => {
      if (!h.disabled) headers.set(h.key, h.value === '{{$guid}}' ? randomUUID() : h.value);
    });
    const raw = item.request.body?.raw;
    const url = item.request.url.toString().replace('{{baseUrl}}', stack.gatewayUrl);
    return fetch(url, { method: item.request.method, headers, body: raw === undefined ? undefined : JSON.stringify(body ? body(JSON.parse(raw) as Record<string, unknown>) : JSON.parse(raw)) });
  };
  const named = (name: string) => items.find((i) => i.name === name)!;

  it('creates a submission with the request as generated (its Idempotency-Key and Prefer: wait example), for a product of ours', async () => {
    const create = named('Create a submission');
    // A new key per send (Postman's {{$guid}}), switched on like Prefer; the principal header stays off.
    expect(create.request.headers.get('Idempotency-Key')).toBe('{{$guid}}');
    expect(create.request.headers.find((h) => h.key === 'x-principal-id')?.disabled).toBe(true);
    const r = await send(create, (b) => ({ ...b, productId: PRODUCT }));
    const body = (await r.json()) as Record<string, unknown>;
    expect(r.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ submissionName: 'Acme Holdings LLC', status: 'submitted' });
    expect(r.headers.get('preference-applied')).toBe('wait=15');
  });

  it('reads the health check and the document the collection came from', async () => {
    const health = await send(named('Who the credentials belong to'));
    expect(health.status).toBe(200);
    const doc = await send(named('This document'));
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { openapi: string }).openapi).toBe('3.1.0');
  });
});

