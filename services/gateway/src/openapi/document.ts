// The OpenAPI 3.1 document served at GET /v1/openapi.json: every operation, schema, header and
// error of the API (seed + API.md + docs/api.md). Built once per process from the environment's
// addresses: servers is {base_url}, and the OAuth2 client-credentials scheme carries the token URL
// and the environment's access scope. Per-operation permissions are enforced but, as the seed asks,
// not listed here. The system tests check every response they receive against this document
// (test/support/conformance.ts), so it stays true. This file holds the document's frame (its
// introduction, its own path) and gathers the rest from the resource list (resources/index.ts):
// each resource's tag, paths and schemas, the job results and the event data. The pieces
// operations share are in common.ts; the components in components.ts, errors.ts, schemas.ts and
// security.ts.
import { DEFAULT_MAX_JSON_VALUES, MAX_JSON_DEPTH } from '../http/json-scan.js';
import { RESOURCES as ALL_RESOURCES } from '../resources/index.js';
import type { OpenApiParts } from '../resources/resource.js';
import { baseHeaders, json, response, type Obj } from './common.js';
import { components } from './components.js';
import { ERROR_CODE_TABLE, errorSchemas } from './errors.js';
import type { OpenApiOptions } from './options.js';
import { ref, sharedSchemas, type Schema } from './schemas.js';
import { SECURITY_SCHEME } from './security.js';

export type { OpenApiOptions } from './options.js';
export { SECURITY_SCHEME } from './security.js';

export const API_VERSION = '1.0.0';
/** GET /: the index, served by route.ts before authentication. */
export const API_INDEX_PATH = '/';

/** Adds `from`'s entries to `into`; a key both have is a mistake (one would hide the other). */
function merge<T>(into: Record<string, T>, from: Readonly<Record<string, T>>, what: string): void {
  for (const [key, value] of Object.entries(from)) {
    if (key in into) throw new Error(`OpenAPI document: ${what} ${key} is defined twice`);
    into[key] = value;
  }
}

/** Who declares each part: the resource's name, or `common` for what the document itself shares. */
export interface OpenApiOwners {
  /** By components.schemas name. */
  schemas: Record<string, string>;
  /** By operationId. */
  operations: Record<string, string>;
}

/** The resources' parts of the document, in the order of the resource list, and who declared each. */
function fromResources(environment = 'uat'): { tags: Obj[]; paths: Obj; schemas: Record<string, Schema>; webhooks: Obj; owners: OpenApiOwners } {
  // A UAT-only resource (test clocks) is no part of another environment's document at all.
  const RESOURCES = ALL_RESOURCES.filter((r) => environment === 'uat' || !r.openapi.uatOnly);
  const eventData: Record<string, Schema> = {};
  for (const r of RESOURCES) merge(eventData, r.openapi.eventData ?? {}, 'the data of event type');
  const parts: OpenApiParts = { jobResults: RESOURCES.flatMap((r) => r.openapi.jobResults ?? []), eventData };
  const tags: Obj[] = [];
  const paths: Obj = { [API_INDEX_PATH]: apiIndexPath(), '/v1/openapi.json': openapiPath() };
  const schemas: Record<string, Schema> = { ...errorSchemas, ApiIndex: API_INDEX_SCHEMA };
  merge(schemas, sharedSchemas, 'schema');
  const webhooks: Obj = {};
  const owners: OpenApiOwners = { schemas: {}, operations: {} };
  const own = (into: Record<string, string>, names: string[], owner: string) => names.forEach((n) => (into[n] = owner));
  own(owners.schemas, Object.keys(schemas), 'common');
  own(owners.operations, operationIds(paths), 'common');
  for (const { name, openapi } of RESOURCES) {
    if (openapi.tag) tags.push({ ...openapi.tag });
    const ownPaths = openapi.paths?.({ environment }) ?? {};
    const ownSchemas = typeof openapi.schemas === 'function' ? openapi.schemas(parts) : (openapi.schemas ?? {});
    merge(paths, ownPaths, 'path');
    merge(schemas, ownSchemas, 'schema');
    merge(webhooks, openapi.webhooks?.(parts) ?? {}, 'webhook');
    own(owners.schemas, Object.keys(ownSchemas), name);
    own(owners.operations, operationIds(ownPaths), name);
  }
  return { tags, paths, schemas, webhooks, owners };
}

const operationIds = (paths: Obj): string[] =>
  Object.values(paths).flatMap((item) => Object.values(item as Obj).flatMap((op) => ((op as Obj)?.operationId ? [(op as Obj).operationId as string] : [])));

/**
 * Which resource declares each schema and each operation of the document (`common`: the document's
 * own): scripts/gen-sdk-types.mjs writes the SDK's wire types one file per resource from it.
 */
export function openApiOwners(): OpenApiOwners {
  return fromResources().owners;
}

const API_INDEX_SCHEMA: Schema = {
  type: 'object',
  description: 'Where to begin: the API, its version, this environment, where its reference and docs are, and how to get a token.',
  additionalProperties: false,
  required: ['name', 'apiVersion', 'environment', 'openapi', 'tokenUrl', 'scope', 'docs'],
  properties: {
    name: { const: 'Partner Submission API' },
    apiVersion: { type: 'string', description: 'The API\'s version (`info.version` of the OpenAPI document); its major version is the path prefix (`/v1`).', examples: [API_VERSION] },
    environment: { type: 'string', enum: ['uat', 'production'], description: 'The environment this address serves.' },
    openapi: { type: 'string', format: 'uri', description: 'The OpenAPI document (`{base_url}/v1/openapi.json`, no token needed).', examples: ['https://api.uat.example.com/v1/openapi.json'] },
    tokenUrl: { type: 'string', format: 'uri', description: 'The token endpoint (`{auth_url}/oauth2/token`): OAuth 2.0 client credentials, HTTP Basic.', examples: ['https://auth.uat.example.com/oauth2/token'] },
    scope: { type: 'string', description: 'The access scope to ask the token endpoint for: this environment\'s, `<api host>/access`. A token for another environment is refused (403 `insufficient_scope`).', examples: ['api.uat.example.com/access'] },
    docs: { type: 'string', format: 'uri', description: 'Where the docs are: the guide when the deployment names one, else the OpenAPI document (its description is the guide in brief).', examples: ['https://api.uat.example.com/v1/openapi.json'] },
  },
};

/** GET /: the index (served by route.ts before authentication). */
function apiIndexPath(): Obj {
  return {
    get: {
      operationId: 'getApiIndex',
      tags: ['Reference'],
      summary: 'Where to begin',
      description:
        'The API\'s name and version, this environment, the URLs of this document, of the token endpoint and of the docs, and the access scope ' +
        'to ask for. Needs no token. Other methods answer 405.',
      security: [],
      responses: {
        200: { description: 'The index.', headers: baseHeaders(), content: json(ref('ApiIndex')) },
        405: response('MethodNotAllowed'),
        500: response('Internal'),
      },
    },
  };
}

/** GET /v1/openapi.json: this document (served by route.ts before authentication). */
function openapiPath(): Obj {
  return {
    get: {
      operationId: 'getOpenApiDocument',
      tags: ['Reference'],
      summary: 'This document',
      description: 'The machine-readable reference of the API, for this environment. Needs no token. Other methods answer 405.',
      security: [],
      responses: {
        200: {
          description: 'The OpenAPI 3.1 document.',
          headers: baseHeaders(),
          content: json({
            type: 'object',
            required: ['openapi', 'info', 'paths'],
            properties: { openapi: { type: 'string', pattern: '^3\\.1\\.' }, info: { type: 'object' }, paths: { type: 'object' } },
          }),
        },
        405: response('MethodNotAllowed'),
        500: response('Internal'),
      },
    },
  };
}

const intro = (maxValues: number): string => `The partner-facing API for insurance business: read policies, create new-business submissions with attachments,
and follow the asynchronous jobs that carry out every mutation.

## Authentication
OAuth 2.0 client credentials: get a token from the token URL of the security scheme with this environment's access scope,
send it as \`Authorization: Bearer <token>\`, cache it and reuse it until shortly before \`expires_in\` runs out. Besides the
scope, each operation needs a permission provisioned to the client (403 \`forbidden\` without it); permissions are not listed
in this document. \`x-principal-id\` attributes a request to a principal registered for the partner.

## Mutations are jobs
Every mutation is queued as a job. Send a fresh \`Idempotency-Key\` and \`Prefer: wait=15\`. On 200 use the result. On 202 poll
\`statusUrl\` honouring \`Retry-After\` (5 s) until the job has \`succeeded\` or \`failed\` (or was \`canceled\`). After a dropped
connection resend the original request with the same key: it returns the same job and never creates a duplicate. Keys are kept
24 hours. A job that has not started can be cancelled (\`POST /v1/jobs/{jobId}/cancel\`): of a cancel and a worker racing, exactly
one wins, whatever the timing, and the answer says which.

## Errors
Every error is \`{"error": {"code", "message", "retryable", "details"?}}\`; a mutation whose job failed within the wait adds
\`jobId\`. Retry only when \`retryable\` is true, with backoff, and after \`Retry-After\` when it is given (429, 503). Any path not
listed here answers 404 \`not_found\` (after authentication: 401 without a token); a method a listed path does not allow answers
405 \`method_not_allowed\` with \`Allow\`, except OPTIONS, which answers 200 with \`Allow\` and no body. Every GET operation
also answers HEAD (the same status and headers, no body). Paths are matched exactly: one with a trailing \`/\` is an unknown
path (\`/v1/health/\` answers 404). Requests whose headers or body arrive too slowly are cut off with 408 and no body.

## JSON bodies
A JSON request body is at most 1 MiB (413 \`payload_too_large\`). It is refused with 400 \`invalid_json\`, the limit named in
\`message\`, before anything else is done with it, when it is not JSON (RFC 8259), nests arrays and objects deeper than
${MAX_JSON_DEPTH} levels, holds more than ${maxValues.toLocaleString('en-US')} values (numbers, strings, \`true\`, \`false\`, \`null\`, arrays and objects, the
body included), or repeats a key in an object (also when written with other escapes, \`"url"\` and \`"\\u0075rl"\`; \`details\`
names the key's path). Every string in it must be usable text (400 \`validation_error\` naming the field).

## Everything else
Every response carries \`X-Request-Id\`. Responses to authenticated requests carry the \`RateLimit-Policy\` and \`RateLimit\`
headers; over the limit the answer is 429 \`rate_limited\` with \`Retry-After\`. Timestamps are UTC with milliseconds, dates
\`YYYY-MM-DD\`, amounts decimal strings. The version is the path prefix \`/v1\`.

Error codes: ${ERROR_CODE_TABLE.map(([code]) => `\`${code}\``).join(', ')}.`;

/** The document for one environment. */
export function buildOpenApiDocument(opts: OpenApiOptions): Obj {
  const { tags, paths, schemas, webhooks } = fromResources(opts.environment);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Partner Submission API',
      version: API_VERSION,
      summary: 'Policies, submissions with attachments, and the jobs that carry out every mutation.',
      description: intro(opts.jsonMaxValues ?? DEFAULT_MAX_JSON_VALUES),
      license: { name: 'Proprietary: for use by contracted partners only', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: opts.baseUrl, description: `The ${opts.environment} environment.` }],
    security: [{ [SECURITY_SCHEME]: [opts.scope] }],
    tags: [...tags, { name: 'Reference', description: 'This document, and the index at `/` that points to it.' }],
    paths,
    webhooks,
    components: components(opts, schemas),
  };
}
