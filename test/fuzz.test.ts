// Issue 48 (7): a schema-driven fuzz run of the served OpenAPI document, in the project and bounded.
// Every operation of GET /v1/openapi.json is called with requests generated from the document
// itself (fast-check): path parameters that exist, belong to another partner or are nonsense;
// query parameters and headers from their schemas or mutated; JSON bodies from the request schema,
// then mutated (a key dropped or added, a value replaced by any JSON, a huge or control-character
// string, not an object, not JSON); multipart bodies whole and broken. Every response must be one
// the document describes (Stack.api checks each: status, headers, body schema) and none may be a 5xx.
// Stateful sequences (create → read → list → upload → withdraw → read and list again) check their
// invariants, another partner sees none of it, and PostgreSQL reports no deadlock for the run.
//
// Bounded: FUZZ_RUNS requests per operation (default 48) and FUZZ_SEQUENCES sequences (default 24),
// one seed (FUZZ_SEED, printed with every failure) so that a failure can be replayed exactly.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { useStack } from './support/use-stack.js';
import { ALL_PERMISSIONS } from './support/stack.js';
import type { ApiResponse } from './support/stack.js';

type Obj = Record<string, unknown>;
type Schema = Obj;

const SEED = Number(process.env.FUZZ_SEED ?? 4_811_227);
const RUNS = Number(process.env.FUZZ_RUNS ?? 48);
const SEQUENCES = Number(process.env.FUZZ_SEQUENCES ?? 24);
const PRODUCT = randomUUID();
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head'] as const;

let token: string;
let otherToken: string;
let doc: Obj;

const stack = useStack(async (s) => {
  await s.startAll({}, { dispatcher: true });
  await s.admin('product', 'add', '--id', PRODUCT, '--name', 'Fuzzed GL');
  token = await s.token(await s.createClient({ permissions: ALL_PERMISSIONS }));
  otherToken = await s.token(await s.createClient({ permissions: ALL_PERMISSIONS }));
  doc = (await s.api('GET', '/v1/openapi.json')).body as Obj;
});

// ---- JSON Schema → fast-check ---------------------------------------------------------------

function resolve(schema: Schema): Schema {
  let s = schema;
  for (let i = 0; i < 10 && typeof s.$ref === 'string'; i++) {
    s = (s.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((o, k) => (o as Obj)[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc) as Schema;
  }
  return s;
}

const inDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

/** Values the schema accepts (mostly: patterns without examples get plain text). */
function valid(schema: Schema, depth = 0, name = ''): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  // URLs point at this machine (the stack allows loopback webhook targets; example hosts do not resolve here).
  if (s.format === 'uri' || (name === 'url' && s.type === 'string')) return fc.constantFrom('https://127.0.0.1:8443/partner', 'https://127.0.0.1/h?x=1');
  if (Array.isArray(s.examples) && s.examples.length > 0 && s.type !== 'object') return fc.constantFrom(...(s.examples as unknown[]));
  if (typeof s.pattern === 'string' && s.pattern.startsWith('^whsec_')) return fc.uint8Array({ minLength: 24, maxLength: 64 }).map((b) => `whsec_${Buffer.from(b).toString('base64')}`);
  const alternatives = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((a) => valid(a, depth + 1)));
  if (Array.isArray(s.allOf)) return valid(s.allOf[0] as Schema, depth + 1);
  const type = Array.isArray(s.type) ? ((s.type as string[]).find((t) => t !== 'null') ?? 'null') : (s.type as string | undefined);
  switch (type) {
    case 'string':
      switch (s.format) {
        case 'uuid':
          return fc.uuid();
        case 'date':
          return fc.integer({ min: 0, max: 120 }).map(inDays);
        case 'date-time':
          return fc.integer({ min: -86_400_000, max: 86_400_000 }).map((ms) => new Date(Date.now() + ms).toISOString());
        default: {
          const min = Number(s.minLength ?? 1);
          const max = Math.max(min, Math.min(Number(s.maxLength ?? 40), 40));
          return fc.string({ minLength: min, maxLength: max, unit: 'grapheme-ascii' }).map((x) => (x.trim() ? x : `v${x}`.slice(0, max)));
        }
      }
    case 'integer':
    case 'number':
      return fc.integer({ min: Number(s.minimum ?? 0), max: Math.min(Number(s.maximum ?? 1000), 1_000_000) });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      if (depth > 4 || !s.items) return fc.constant([]);
      const size = { minLength: Number(s.minItems ?? 0), maxLength: Math.min(Number(s.maxItems ?? 3), 3) };
      const item = valid(s.items as Schema, depth + 1);
      return s.uniqueItems ? fc.uniqueArray(item, { ...size, selector: (v) => JSON.stringify(v) }) : fc.array(item, size);
    }
    case 'object':
    default: {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      if (depth > 4) return fc.constant({});
      const required = new Set((s.required ?? []) as string[]);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) record[k] = valid(v, depth + 1, k);
      return fc.record(record, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
    }
  }
}

const HOSTILE_STRINGS = ['', ' ', 'a'.repeat(5000), `${'a'.repeat(20_000)}\u0001`, 'tab\there', 'x\u0000y', '\ud800', '../../etc/passwd', '%00', '<script>alert(1)</script>', "'; DROP TABLE x;--", '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '1e309', '-1'];
const hostileValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom<unknown>(...HOSTILE_STRINGS), fc.constantFrom<unknown>(null, true, 0, -1, 2 ** 53, 1.5, [], {}));

/** Paths to every value inside `v` (objects and arrays). */
function leaves(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(v)) return [at, ...v.flatMap((x, i) => leaves(x, [...at, i]))];
  if (typeof v === 'object' && v !== null) return [at, ...Object.entries(v).flatMap(([k, x]) => leaves(x, [...at, k]))];
  return [at];
}
function setAt(v: unknown, path: (string | number)[], value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  const copy = (Array.isArray(v) ? [...v] : { ...(v as Obj) }) as Record<string | number, unknown>;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  if (rest.length === 0 && remove) delete copy[head];
  else copy[head] = setAt(copy[head], rest, value, remove);
  return copy;
}

/** A valid value, or one broken in one place. */
function mutated(schema: Schema): fc.Arbitrary<unknown> {
  return valid(schema).chain((v) => {
    const spots = leaves(v);
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant(v) },
      { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...spots), hostileValue).map(([p, x]) => setAt(v, p, x)) },
      { weight: 1, arbitrary: fc.constantFrom(...spots.filter((p) => p.length > 0), ['x']).map((p) => setAt(v, p, undefined, true)) },
      { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), hostileValue).map(([k, x]) => (typeof v === 'object' && v !== null ? { ...(v as Obj), [k]: x } : x)) },
      { weight: 1, arbitrary: hostileValue },
    );
  });
}

// ---- requests ---------------------------------------------------------------------------------

interface Operation {
  method: string;
  template: string;
  op: Obj;
}
function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Obj>)) {
    for (const method of METHODS) {
      const op = item[method] as Obj | undefined;
      if (op?.responses) out.push({ method: method.toUpperCase(), template, op });
    }
  }
  return out;
}

/** Ids that exist for the fuzzing partner (filled by the setup test), by path parameter name. */
const known: Record<string, string[]> = {};
const remember = (name: string, id: unknown) => {
  if (typeof id === 'string') (known[name] ??= []).push(id);
};

interface Request {
  path: string;
  headers: Record<string, string>;
  json?: unknown;
  body?: BodyInit;
  raw?: string;
}

function params(o: Operation): Schema[] {
  return ((o.op.parameters ?? []) as Schema[]).map(resolve);
}

function requestArb(o: Operation): fc.Arbitrary<Request> {
  const names = [...o.template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const pathArb = fc.tuple(
    ...names.map((n) =>
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...(known[n] ?? [randomUUID()])) },
        { weight: 1, arbitrary: fc.uuid() },
        { weight: 1, arbitrary: fc.constantFrom('x', 'job_', '%2e%2e', 'a'.repeat(300), '00000000-0000-0000-0000-000000000000', "'") },
      ),
    ),
  );
  const query = params(o).filter((p) => p.in === 'query');
  const header = params(o).filter((p) => p.in === 'header');
  // Each query parameter: mostly absent or valid, sometimes hostile (so that whole requests pass as
  // well as fail). A cursor is opaque: a generated one is only ever hostile.
  const queryArb = fc.tuple(
    ...query.map((p) =>
      fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        { weight: p.name === 'cursor' ? 0 : 3, arbitrary: valid(p.schema as Schema) },
        { weight: 1, arbitrary: hostileValue },
      ),
    ),
  );
  // Headers likewise: mostly absent, sometimes from their schema (a principal id that is not
  // registered is refused), sometimes hostile.
  const headerArb = fc.tuple(
    ...header.map((p) =>
      fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        {
          weight: 2,
          arbitrary:
            (p.name as string).toLowerCase() === 'prefer'
              ? fc.constantFrom('wait=1', 'wait=0', 'respond-async', 'wait=abc', 'wait=1, respond-async', 'return=minimal')
              : valid(p.schema as Schema),
        },
        { weight: 1, arbitrary: fc.constantFrom('', 'x'.repeat(300), 'a b', '"*"', 'W/"x"') },
      ),
    ),
  );
  const content = ((o.op.requestBody as Obj | undefined)?.content ?? {}) as Record<string, Obj>;
  const jsonSchema = content['application/json']?.schema as Schema | undefined;
  const bodyArb: fc.Arbitrary<Pick<Request, 'json' | 'body' | 'raw'>> = jsonSchema
    ? fc.oneof(
        { weight: 6, arbitrary: mutated(jsonSchema).map((json) => ({ json })) },
        { weight: 1, arbitrary: fc.constantFrom('{', '[1,', '{"a":1,"a":2}', 'null', '"\\ud800"', `{"x":${'['.repeat(40)}${']'.repeat(40)}}`).map((raw) => ({ raw })) },
      )
    : content['multipart/form-data']
      ? fc.constantFrom(
          ...(['loss_run', 'acord_form', '', 'x'.repeat(200)] as const).flatMap((documentType) =>
            ['application/pdf', 'text/plain', 'application/x-msdownload'].map((type) => ({ documentType, type })),
          ),
          { documentType: 'broken', type: '' },
        ).map(({ documentType, type }) => {
          if (documentType === 'broken') return { raw: '--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nunterminated' };
          const form = new FormData();
          if (documentType) form.set('documentType', documentType);
          form.set('file', new Blob([type === 'application/pdf' ? '%PDF-1.4\n%fuzz\n' : 'fuzz'], { type }), 'fuzz.pdf');
          return { body: form };
        })
      : fc.constant({});
  return fc.tuple(pathArb, queryArb, headerArb, bodyArb, fc.uuid()).map(([ids, qs, hs, b, key]) => {
    let i = 0;
    const path = o.template.replace(/\{\w+\}/g, () => encodeURIComponent(ids[i++] as string));
    const search = new URLSearchParams();
    query.forEach((p, j) => {
      const v = qs[j];
      // At most 2,000 characters a value: a request line beyond Node's 16 KiB header limit is refused
      // by the HTTP parser itself (431, before any of the gateway runs), not by the API.
      if (v !== undefined) search.set(p.name as string, (typeof v === 'string' ? v : JSON.stringify(v)).slice(0, 2000));
    });
    const headers: Record<string, string> = {};
    header.forEach((p, j) => {
      const v = hs[j];
      if (v !== undefined) headers[p.name as string] = String(v);
    });
    // Every mutation gets a fresh key unless the generated one was kept (then replays are exercised too).
    if (o.method !== 'GET' && o.method !== 'HEAD' && !headers['Idempotency-Key'] && header.some((p) => p.name === 'Idempotency-Key')) headers['Idempotency-Key'] = key;
    if (b.raw !== undefined) headers['content-type'] = b.json === undefined && b.body === undefined && 'raw' in b && b.raw.startsWith('--x') ? 'multipart/form-data; boundary=x' : 'application/json';
    return { path: search.size ? `${path}?${search}` : path, headers, ...b };
  });
}

const failures: string[] = [];
/** Responses by operation and status class, so that the run shows it reached past the validation. */
const classes = new Map<string, Set<string>>();
async function call(method: string, r: Request, t = token): Promise<ApiResponse | undefined> {
  try {
    const res = await stack.api(method, r.path, { token: t, headers: r.headers, ...(r.json !== undefined ? { json: r.json } : {}), ...(r.raw !== undefined ? { body: r.raw } : r.body ? { body: r.body } : {}) });
    const op = `${method} ${r.path.split('?')[0]!.replace(/\/[^/]*[0-9a-f]{8}-[^/]*|\/(?:job|we)_[^/]*/g, '/{id}')}`;
    (classes.get(op) ?? classes.set(op, new Set()).get(op)!).add(`${String(res.status)[0]}xx`);
    if (res.status >= 500) failures.push(`${method} ${r.path} → ${res.status} ${res.text.slice(0, 300)}`);
    return res;
  } catch (err) {
    failures.push(`${method} ${r.path} (seed ${SEED}): ${(err as Error).message.slice(0, 500)}`);
    return undefined;
  }
}

const deadlocks = async () =>
  Number((await stack.sql<{ n: string }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()'))[0]!.n);

const wait = { prefer: 'wait=20' };
const submission = (over: Obj = {}) => ({
  externalRef: `fuzz-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: inDays(10),
  productId: PRODUCT,
  applicant: { legalName: 'Fuzzed Holdings LLC' },
  ...over,
});

describe('schema-driven fuzzing of the served OpenAPI document', () => {
  it('has something of each kind to point at (submissions, attachments, jobs, events, endpoints, products)', async () => {
    for (let i = 0; i < 2; i++) {
      const s = await stack.api('POST', '/v1/submissions', { token, headers: wait, json: submission() });
      expect(s.status, s.text).toBe(200);
      remember('submissionId', s.body.submissionId);
      const form = new FormData();
      form.set('documentType', 'loss_run');
      form.set('file', new Blob(['%PDF-1.4\n'], { type: 'application/pdf' }), 'a.pdf');
      const a = await stack.api('POST', `/v1/submissions/${s.body.submissionId}/attachments`, { token, headers: wait, body: form });
      expect(a.status, a.text).toBe(200);
      remember('attachmentId', a.body.attachmentId);
    }
    const e = await stack.api('POST', '/v1/webhook-endpoints', { token, headers: wait, json: { url: 'https://127.0.0.1:8443/fuzz', eventTypes: ['submission.created'] } });
    expect(e.status, e.text).toBe(200);
    remember('endpointId', e.body.endpointId);
    remember('productId', PRODUCT);
    for (const job of ((await stack.api('GET', '/v1/jobs?limit=5', { token })).body.items ?? []) as Obj[]) remember('jobId', job.id);
    const events = await stack.api('GET', '/v1/events?limit=5', { token });
    for (const ev of (events.body.items ?? []) as Obj[]) remember('eventId', ev.id);
    // Another partner's submission: its id must be a 404 here like any unknown one.
    const theirs = await stack.api('POST', '/v1/submissions', { token: otherToken, headers: wait, json: submission() });
    remember('submissionId', theirs.body.submissionId);
    expect(Object.keys(known).sort()).toEqual(expect.arrayContaining(['attachmentId', 'endpointId', 'eventId', 'jobId', 'productId', 'submissionId']));
  });

  it('answers every generated request to every operation within the document, never with a 5xx', async () => {
    const before = await deadlocks();
    const ops = operations();
    expect(ops.length).toBeGreaterThan(30);
    let sent = 0;
    for (const [n, o] of ops.entries()) {
      const samples = fc.sample(requestArb(o), { seed: SEED + n, numRuns: RUNS });
      // Four at a time: concurrent requests on the same objects are part of what is fuzzed.
      for (let i = 0; i < samples.length; i += 4) {
        await Promise.all(samples.slice(i, i + 4).map((r) => call(o.method, r)));
        sent += Math.min(4, samples.length - i);
      }
    }
    expect(sent).toBe(ops.length * RUNS);
    // Both outcomes were reached where they matter: the generated bodies pass as well as fail.
    for (const op of ['POST /v1/submissions', 'POST /v1/submissions/validate', 'POST /v1/webhook-endpoints', 'GET /v1/submissions', 'GET /v1/jobs']) {
      expect([...(classes.get(op) ?? [])].sort(), op).toEqual(expect.arrayContaining(['2xx', '4xx']));
    }
    expect(failures, `seed ${SEED}`).toEqual([]);
    expect(await deadlocks()).toBe(before);
  }, 240_000);

  it('keeps its invariants over stateful sequences, and another partner sees none of them', async () => {
    const runs = fc.sample(fc.tuple(mutated(resolve({ $ref: '#/components/schemas/SubmissionCreate' })), fc.boolean(), fc.boolean()), { seed: SEED, numRuns: SEQUENCES });
    for (const [fuzzed, upload, withdraw] of runs) {
      // A fuzzed body is answered within the document (checked by call); a good one is then followed.
      await call('POST', { path: '/v1/submissions', headers: { ...wait, 'Idempotency-Key': randomUUID() }, json: fuzzed });
      const created = await stack.api('POST', '/v1/submissions', { token, headers: wait, json: submission() });
      expect(created.status, created.text).toBe(200);
      const id = created.body.submissionId as string;
      const read = await stack.api('GET', `/v1/submissions/${id}`, { token });
      expect(read.body).toMatchObject({ submissionId: id, status: expect.any(String) });
      const listed = await stack.api('GET', `/v1/submissions?externalRef=${encodeURIComponent(read.body.externalRef)}`, { token });
      expect(listed.body.items.map((s: Obj) => s.submissionId)).toEqual([id]);
      if (upload) {
        const form = new FormData();
        form.set('documentType', 'loss_run');
        form.set('file', new Blob(['%PDF-1.4\n'], { type: 'application/pdf' }), 'seq.pdf');
        const a = await stack.api('POST', `/v1/submissions/${id}/attachments`, { token, headers: wait, body: form });
        expect(a.status, a.text).toBe(200);
        const attachments = await stack.api('GET', `/v1/submissions/${id}/attachments`, { token });
        expect(attachments.body.items).toHaveLength(1);
      }
      if (withdraw) {
        const w = await stack.api('POST', `/v1/submissions/${id}/withdraw`, { token, headers: wait, json: { reason: 'other', note: 'fuzzed' } });
        // A submission just created is withdrawable: anything but 200 is a broken withdraw.
        expect(w.status, w.text).toBe(200);
        {
          expect((await stack.api('GET', `/v1/submissions/${id}`, { token })).body.status).toBe('withdrawn');
          const withdrawn = await stack.api('GET', `/v1/submissions?status=withdrawn&externalRef=${encodeURIComponent(read.body.externalRef)}`, { token });
          expect(withdrawn.body.items.map((s: Obj) => s.submissionId)).toEqual([id]);
        }
      }
      // The other partner: every view of it is a 404 or an empty list.
      expect((await stack.api('GET', `/v1/submissions/${id}`, { token: otherToken })).status).toBe(404);
      expect((await stack.api('GET', `/v1/submissions/${id}/attachments`, { token: otherToken })).status).toBe(404);
      expect((await stack.api('GET', `/v1/submissions?externalRef=${encodeURIComponent(read.body.externalRef)}`, { token: otherToken })).body.items).toEqual([]);
    }
    expect(failures, `seed ${SEED}`).toEqual([]);
  }, 240_000);
});
