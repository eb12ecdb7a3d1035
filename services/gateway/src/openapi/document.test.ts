// The served OpenAPI document, pinned: buildOpenApiDocument for a UAT and a production environment is
// compared with the documents committed in __fixtures__/ (written before the gateway moved to one
// folder per resource, issue 41), apart from the order of object keys. Arrays are compared in order,
// every one of them: `tags`, `parameters`, `required`, `enum`, `oneOf` and `examples` keep theirs.
// A deliberate change of the document regenerates the fixtures and shows up in their diff:
//   UPDATE_OPENAPI_FIXTURES=1 npx vitest run --project unit services/gateway/src/openapi/document.test.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, type OpenApiOptions } from './document.js';

const ENVIRONMENTS: Record<string, OpenApiOptions> = {
  uat: {
    baseUrl: 'https://api.uat.example.com',
    tokenUrl: 'https://auth.uat.example.com/oauth2/token',
    scope: 'api.uat.example.com/access',
    environment: 'uat',
  },
  production: {
    baseUrl: 'https://api.example.com',
    tokenUrl: 'https://auth.example.com/oauth2/token',
    scope: 'api.example.com/access',
    environment: 'production',
    jsonMaxValues: 25_000,
  },
};

const fixture = (name: string): URL => new URL(`./__fixtures__/openapi-${name}.json`, import.meta.url);

/** The value with every object's keys sorted, recursively; arrays keep their order. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

describe('the served OpenAPI document', () => {
  for (const [name, opts] of Object.entries(ENVIRONMENTS)) {
    it(`is the committed one for ${name}, apart from key order`, () => {
      // Through JSON, as served: undefined members drop out exactly as they do on the wire.
      const built = JSON.parse(JSON.stringify(buildOpenApiDocument(opts))) as unknown;
      if (process.env.UPDATE_OPENAPI_FIXTURES) writeFileSync(fixture(name), `${JSON.stringify(built, null, 2)}\n`);
      const committed = JSON.parse(readFileSync(fixture(name), 'utf8')) as unknown;
      expect(sortKeys(built)).toEqual(sortKeys(committed));
    });
  }
});
