// Generates the Postman collection (docs/postman/partner-submission.postman_collection.json) from the
// gateway's OpenAPI document with Postman's own converter (openapi-to-postmanv2), so the collection
// never drifts from the API: `npm run postman` rewrites it, and test/postman.test.ts fails when the
// committed file differs from a fresh generation. Needs the build (`npm run build`).
//   node scripts/gen-postman.mjs [--check]
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
export const COLLECTION_FILE = `${root}docs/postman/partner-submission.postman_collection.json`;

/** The collection as JSON text: deterministic (no random ids or faked values), ready to commit. */
export async function generateCollection() {
  const { buildOpenApiDocument } = await import(`${root}services/gateway/dist/openapi/document.js`);
  const converter = await loadConverter();
  // A UAT-shaped document; the collection's variables (baseUrl, the token URL) are what a partner edits.
  const spec = buildOpenApiDocument({
    baseUrl: 'https://api.uat.example.com',
    tokenUrl: 'https://auth.uat.example.com/oauth2/token',
    scope: 'api.uat.example.com/access',
    environment: 'uat',
  });
  // testClockId (UAT test clocks) is optional and no example can name a clock that exists: a faked one
  // would fail every generated create with unknown_test_clock, so the collection's body leaves it out.
  delete spec.components.schemas.SubmissionCreate?.properties?.testClockId;
  randomSource = seeded(0x5eed);
  const result = await promisify(converter.convert)(
    { type: 'json', data: exampleFromExamples(withoutBrowserRoutes(spec)) },
    {
      folderStrategy: 'Tags',
      requestNameSource: 'Fallback',
      parametersResolution: 'Example',
      requestParametersResolution: 'Example',
      exampleParametersResolution: 'Example',
      schemaFaker: true,
      stackLimit: 50,
      includeWebhooks: false,
      alwaysInheritAuthentication: true,
      enableOptionalParameters: false,
    },
  );
  randomSource = originalRandom;
  if (!result.result) throw new Error(`openapi-to-postmanv2: ${result.reason}`);
  const collection = result.output[0].data;
  return `${JSON.stringify(stable(recommendedHeaders(successExamplesOnly(collection))), null, 2)}\n`;
}

/**
 * The document is OpenAPI 3.1, whose schemas carry JSON Schema `examples: [...]`; the converter reads
 * the 3.0 `example`. Each schema's first example becomes its `example` (media-type `examples` maps are
 * objects, not arrays, and stay as they are).
 */
function exampleFromExamples(value) {
  if (Array.isArray(value)) return value.map(exampleFromExamples);
  if (value && typeof value === 'object') {
    const out = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, exampleFromExamples(v)]));
    if (Array.isArray(value.examples) && value.examples.length > 0 && !('example' in value)) out.example = value.examples[0];
    return out;
  }
  return value;
}

// The converter fills what has no example with json-schema-faker and randexp, which draw on Math.random
// (the faker keeps the function it found when it loaded). Math.random is wrapped before the converter
// loads and draws from a seeded generator during a conversion only, so the output is the same on every
// run; at any other time the wrapper is Math.random itself.
const originalRandom = Math.random;
let randomSource = originalRandom;
let converterModule;
async function loadConverter() {
  if (!converterModule) {
    Math.random = () => randomSource();
    converterModule = (await import('openapi-to-postmanv2')).default;
  }
  return converterModule;
}

/**
 * The partner console's browser routes (/console/…: HTML pages, the link exchange, static files) are in
 * the document because the gateway serves them, but a collection is for calling the API: left out.
 */
function withoutBrowserRoutes(spec) {
  const paths = Object.fromEntries(Object.entries(spec.paths).filter(([path]) => path !== '/console' && !path.startsWith('/console/')));
  return { ...spec, paths };
}

/** mulberry32: a small deterministic PRNG with Math.random's contract (uniform in [0, 1)). */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The recommended pattern, ready to send: every mutation with a fresh Idempotency-Key (Postman's
 * {{$guid}}, a new UUID per send; a fixed example key would replay the first job every time), and
 * Prefer: wait=15 switched on. The converter leaves optional headers switched off.
 */
function recommendedHeaders(node) {
  if (Array.isArray(node.item)) return { ...node, item: node.item.map(recommendedHeaders) };
  if (!node.request?.header) return node;
  const header = node.request.header.map((h) => {
    if (h.key === 'Idempotency-Key') return { ...h, value: '{{$guid}}', disabled: false };
    if (h.key === 'Prefer') return { ...h, disabled: false };
    return h;
  });
  return { ...node, request: { ...node.request, header } };
}

/** Each request keeps its success examples; the error answers are in the OpenAPI document's table. */
function successExamplesOnly(node) {
  if (Array.isArray(node.item)) return { ...node, item: node.item.map(successExamplesOnly) };
  if (Array.isArray(node.response)) return { ...node, response: node.response.filter((r) => r.code >= 200 && r.code < 300) };
  return node;
}

/** Drops the converter's random ids so two generations of the same document are byte-identical. */
function stable(value) {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'id' && k !== '_postman_id').map(([k, v]) => [k, stable(v)]));
  }
  return value;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = await generateCollection();
  if (process.argv.includes('--check')) {
    if (readFileSync(COLLECTION_FILE, 'utf8') !== text) {
      console.error(`${COLLECTION_FILE} is out of date: run npm run postman`);
      process.exit(1);
    }
  } else {
    writeFileSync(COLLECTION_FILE, text);
    console.log(`wrote ${COLLECTION_FILE}`);
  }
}
