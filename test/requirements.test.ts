// Products that say what they require (API.md "Products and their requirements"), end to end on the
// real stack: the catalogue routes and products/read, the admin command (refusals name the bad part;
// nothing half-applied), product.requirements_changed to every partner, POST /v1/submissions/validate,
// enforcement in the create job (422 requirements_not_met naming each field), a change mid-stream,
// each attachment rule, currentlyDue across uploads and deletes with submission.requirements_updated,
// and a property test: Ajv 2020 on the published schema, validate and a real create agree.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { useStack } from './support/use-stack.js';
import { until } from './support/poll.js';
import { fileBytes, multipartBytes, upload } from './support/attachments.js';
import { ALL_PERMISSIONS } from './support/stack.js';
import { useReceivers } from './support/receiver.js';

const PRODUCT = randomUUID();
const FILES = mkdtempSync(join(tmpdir(), 'requirements-'));
let token: string;
let otherToken: string;

const receiver = useReceivers();
const stack = useStack(async (stack) => {
  await stack.startAll({}, { dispatcher: true });
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Requirements GL');
  token = await stack.token(await stack.createClient());
  otherToken = await stack.token(await stack.createClient());
});

/** Writes a requirements file and runs `product requirements set` with it. */
async function setRequirements(doc: unknown, product = PRODUCT) {
  const file = join(FILES, `${randomUUID()}.json`);
  writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return stack.adminRaw('product', 'requirements', 'set', '--id', product, file);
}
async function mustSet(doc: unknown): Promise<number> {
  const r = await setRequirements(doc);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { requirementsVersion: number }).requirementsVersion;
}

const today = () => new Date().toISOString().slice(0, 10);
/** The UTC calendar day n days after today. */
const inDays = (n: number) => new Date(Date.parse(`${today()}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const body = (over: Record<string, unknown> = {}) => ({
  externalRef: `ref-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: inDays(10),
  productId: PRODUCT,
  applicant: { legalName: 'Acme Holdings LLC' },
  ...over,
});
const ADDRESS = { line1: '1 Main Street', city: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' };
const create = (json: unknown, t = token) => stack.api('POST', '/v1/submissions', { token: t, json, headers: { prefer: 'wait=20' } });
const validate = (json: unknown, t = token) => stack.api('POST', '/v1/submissions/validate', { token: t, json });
const fieldsOf = (list: { field: string }[] | undefined) => [...new Set((list ?? []).map((e) => e.field))].sort();
const countJobs = async () => Number((await stack.sql<{ n: string }>('SELECT count(*) AS n FROM job.jobs'))[0]!.n);

async function eventsOf(t: string, type: string): Promise<{ id: string; type: string; data: Record<string, unknown> }[]> {
  const r = await stack.api('GET', `/v1/events?limit=200&types=${type}`, { token: t });
  expect(r.status).toBe(200);
  return r.body.items;
}

describe('the catalogue', () => {
  it('needs products/read, and shows every partner the same catalogue', async () => {
    const without = await stack.token(await stack.createClient({ permissions: ALL_PERMISSIONS.filter((p) => p !== 'products/read') }));
    expect((await stack.api('GET', '/v1/products', { token: without })).status).toBe(403);
    expect((await stack.api('GET', `/v1/products/${PRODUCT}/requirements`, { token: without })).body.error.code).toBe('forbidden');
    const mine = await stack.api('GET', '/v1/products?active=true', { token });
    const theirs = await stack.api('GET', '/v1/products?active=true', { token: otherToken });
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((p: { productId: string }) => p.productId)).toContain(PRODUCT);
    expect(theirs.body).toEqual(mine.body);
    const one = await stack.api('GET', `/v1/products/${PRODUCT}`, { token: otherToken });
    expect(one.body).toMatchObject({ productId: PRODUCT, name: 'Requirements GL', active: true });
    expect((await stack.api('GET', '/v1/products?active=maybe', { token })).status).toBe(400);
    expect((await stack.api('GET', '/v1/products?limit=0', { token })).status).toBe(400);
  });

  it('answers 404 for an unknown product and 304 for a current ETag', async () => {
    expect((await stack.api('GET', `/v1/products/${randomUUID()}/requirements`, { token })).status).toBe(404);
    expect((await stack.api('GET', '/v1/products/nope/requirements', { token })).body.error.code).toBe('not_found');
    const first = await stack.api('GET', `/v1/products/${PRODUCT}/requirements`, { token });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await stack.api('GET', `/v1/products/${PRODUCT}/requirements`, { token, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
  });
});

describe('product requirements set', () => {
  it.each([
    [{ applicant: { required: ['ssn'] } }, 'applicant.required[0]'],
    [{ effectiveDate: { minDaysAhead: -1 } }, 'effectiveDate.minDaysAhead'],
    [{ effectiveDate: { minDaysAhead: 30, maxDaysAhead: 5 } }, 'inverted window'],
    [{ attachments: [{ documentType: 'loss_run', min: 3, max: 1 }] }, 'min (3) greater than max (1)'],
    [{ attachments: [{ documentType: 'loss_run', mediaTypes: ['pdf'] }] }, 'attachments[0].mediaTypes[0]'],
    ['{not json', 'not valid JSON'],
  ])('refuses %j naming the bad part, and changes nothing', async (doc, named) => {
    const before = (await stack.api('GET', `/v1/products/${PRODUCT}`, { token })).body.requirementsVersion;
    const r = await setRequirements(doc);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(named);
    expect((await stack.api('GET', `/v1/products/${PRODUCT}`, { token })).body.requirementsVersion).toBe(before);
  });

  it('refuses an unknown product', async () => {
    const r = await setRequirements({}, randomUUID());
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('unknown product');
  });

  it('bumps the version, publishes the schema and tells every partner, in its feed and to its webhooks', async () => {
    const hooks = await receiver();
    const endpoint = await stack.api('POST', '/v1/webhook-endpoints', {
      token: otherToken,
      headers: { prefer: 'wait=20' },
      json: { url: hooks.url, eventTypes: ['product.requirements_changed'] },
    });
    expect(endpoint.status, endpoint.text).toBe(200);
    const before = (await stack.api('GET', `/v1/products/${PRODUCT}`, { token })).body.requirementsVersion as number;
    const version = await mustSet({ applicant: { required: ['address'] } });
    expect(version).toBe(before + 1);
    const req = await stack.api('GET', `/v1/products/${PRODUCT}/requirements`, { token });
    expect(req.body).toMatchObject({ productId: PRODUCT, version, applicant: { required: ['address'] }, effectiveDate: null, attachments: [] });
    expect(req.body.submissionSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    for (const t of [token, otherToken]) {
      const seen = await until('product.requirements_changed in the feed', async () => {
        const items = await eventsOf(t, 'product.requirements_changed');
        return items.find((e) => e.data.productId === PRODUCT && e.data.requirementsVersion === version);
      });
      expect(seen.data).toMatchObject({ productId: PRODUCT, name: 'Requirements GL', active: true, requirementsVersion: version });
    }
    // Each partner's copy is its own event; the other partner's webhook gets its copy.
    const mine = (await eventsOf(token, 'product.requirements_changed')).find((e) => e.data.requirementsVersion === version)!;
    const theirs = (await eventsOf(otherToken, 'product.requirements_changed')).find((e) => e.data.requirementsVersion === version)!;
    expect(mine.id).not.toBe(theirs.id);
    expect((await stack.api('GET', `/v1/events/${theirs.id}`, { token })).status).toBe(404);
    const delivered = await hooks.waitFor('the webhook delivery', (rs) => rs.find((r) => JSON.parse(r.body).id === theirs.id));
    expect(JSON.parse(delivered.body)).toMatchObject({ type: 'product.requirements_changed', data: { productId: PRODUCT, requirementsVersion: version } });
  });
});

describe('POST /v1/submissions/validate', () => {
  it('is a 400 only for a body that is not JSON or not an object, and creates nothing', async () => {
    const jobs = await countJobs();
    const notJson = await stack.api('POST', '/v1/submissions/validate', { token, body: '{', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('invalid_json');
    expect((await validate([1, 2])).status).toBe(400);
    expect((await validate('text')).status).toBe(400);
    const empty = await validate({});
    expect(empty.status).toBe(200);
    expect(empty.body.valid).toBe(false);
    expect(fieldsOf(empty.body.errors)).toEqual(['applicant', 'effectiveDate', 'externalRef', 'productId', 'submissionType'].sort());
    const unknown = await validate(body({ productId: randomUUID() }));
    expect(unknown.body).toMatchObject({ valid: false, errors: [{ field: 'productId', code: 'unknown_product' }], requirementsVersion: null });
    const sandbox = await validate(body({ externalRef: 'sandbox:explode', applicant: { legalName: 'A', address: ADDRESS } }));
    expect(sandbox.body.errors).toEqual([expect.objectContaining({ field: 'externalRef', code: 'invalid_sandbox_directive' })]);
    // A path of its own, POST only: GET is a 405 naming POST (not a submission id's 404).
    const get = await stack.api('GET', '/v1/submissions/validate', { token });
    expect(get.status).toBe(405);
    expect(get.body.error.code).toBe('method_not_allowed');
    expect(get.headers.get('allow')).toBe('POST');
    // Control characters: named as an error of a 200 (the create refuses them), never a 400.
    const control = await validate(body({ externalRef: 'ref\u0001', applicant: { legalName: 'Tab\tCo', address: ADDRESS } }));
    expect(control.status).toBe(200);
    expect(control.body.valid).toBe(false);
    expect(fieldsOf(control.body.errors)).toEqual(['applicant.legalName', 'externalRef']);
    expect(await countJobs()).toBe(jobs);
  });
  it('names at most 100 problems, and says when there were more (issue 48, 4)', async () => {
    const many = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`unknown${i}`, 1]));
    const v = await validate({ ...body(), ...many });
    expect(v.status).toBe(200);
    expect(v.body.valid).toBe(false);
    expect(v.body.errors).toHaveLength(100);
    expect(v.body.errors[0]).toEqual({ field: 'unknown0', code: 'unknown_field', message: 'is not a known field' });
    expect(v.body.errorsTruncated).toBe(true);
    // A problem beyond the schema is never the one cut: an unknown product among 3,000 unknown keys.
    const unknownProduct = await validate({ ...body({ productId: randomUUID() }), ...many });
    expect(unknownProduct.body.errors).toHaveLength(100);
    expect(unknownProduct.body.errors[0]).toMatchObject({ field: 'productId', code: 'unknown_product' });
    expect(v.text.length).toBeLessThan(10_000);
    // Exactly 100 problems: all of them, and no flag.
    const own = (await validate(body())).body.errors.length as number;
    const hundred = await validate({ ...body(), ...Object.fromEntries(Array.from({ length: 100 - own }, (_, i) => [`unknown${i}`, 1])) });
    expect(hundred.body.errors).toHaveLength(100);
    expect(hundred.body).not.toHaveProperty('errorsTruncated');
  });
});

describe('POST /v1/submissions/validate on hostile strings', () => {
  // Issue 48 (1): a long name ending in a control character or a lone surrogate made the
  // visible-text pattern backtrack quadratically (80k characters: 6.3 s, during which every other
  // partner's request waited). Both now answer at once, and another partner is served meanwhile.
  it.each([
    ['a control character', '\u0001'],
    ['a lone surrogate', '\ud800'],
  ])('answers 300,000-character strings ending in %s in milliseconds while another partner is served', async (_, tail) => {
    const name = `${'a'.repeat(300_000)}${tail}`;
    const started = performance.now();
    const slow = validate(body({ externalRef: `ref${'b'.repeat(300_000)}${tail}`, applicant: { legalName: name, address: { ...ADDRESS, city: name } } })).then((r) => ({
      r,
      ms: performance.now() - started,
    }));
    const other = stack.api('GET', '/v1/products', { token: otherToken }).then((r) => ({ r, ms: performance.now() - started }));
    const [v, o] = await Promise.all([slow, other]);
    expect(o.r.status).toBe(200);
    expect(v.r.status).toBe(200);
    expect(v.r.body.valid).toBe(false);
    expect(fieldsOf(v.r.body.errors)).toEqual(['applicant.address.city', 'applicant.legalName', 'externalRef']);
    // Quadratic matching took minutes at this length; linear matching takes milliseconds. Generous
    // bounds for a loaded machine, far below what the old patterns needed.
    expect(v.ms).toBeLessThan(3000);
    expect(o.ms).toBeLessThan(3000);
    // The gateway stays live for everyone.
    expect((await fetch(`${stack.opsUrls.gateway}/livez`)).status).toBe(200);
  });
});

describe('enforcement in the create job', () => {
  it('fails 422 requirements_not_met naming each field, and records the version that judged a success', async () => {
    const version = await mustSet({ applicant: { required: ['taxId', 'address'] }, effectiveDate: { minDaysAhead: 1, maxDaysAhead: 30 } });
    const bad = body({ effectiveDate: today() });
    const v = await validate(bad);
    expect(v.body).toMatchObject({ valid: false, requirementsVersion: version });
    expect(fieldsOf(v.body.errors)).toEqual(['applicant.address', 'applicant.taxId', 'effectiveDate']);
    const r = await create(bad);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'requirements_not_met', retryable: false });
    expect(fieldsOf(r.body.error.details)).toEqual(['applicant.address', 'applicant.taxId', 'effectiveDate']);
    const job = await stack.api('GET', `/v1/jobs/${r.body.jobId}`, { token });
    expect(fieldsOf(job.body.error.details)).toEqual(['applicant.address', 'applicant.taxId', 'effectiveDate']);
    expect(await stack.sql('SELECT 1 FROM submission.submissions WHERE external_ref = $1', [bad.externalRef])).toHaveLength(0);

    const good = body({ applicant: { legalName: 'Acme', taxId: '12-3456789', address: ADDRESS } });
    expect((await validate(good)).body).toEqual({ valid: true, errors: [], requirementsVersion: version });
    const ok = await create(good);
    expect(ok.status).toBe(200);
    const s = await stack.api('GET', `/v1/submissions/${ok.body.submissionId}`, { token });
    expect(s.body.requirements).toEqual({ version, currentlyDue: [] });
    expect(s.body.applicant.taxId).toBe('123456789');
  });

  it('judges a job that runs after a change by the new version (the worker does not keep a stale copy)', async () => {
    const v1 = await mustSet({});
    const plain = () => body({ applicant: { legalName: 'Midstream Ltd' } });
    // Under v1 a plain body passes: the worker has the product cached now.
    const first = await create(plain());
    expect(first.status).toBe(200);
    expect((await stack.api('GET', `/v1/submissions/${first.body.submissionId}`, { token })).body.requirements.version).toBe(v1);
    // The change takes effect for the very next job, well within the worker's cache time.
    const v2 = await mustSet({ applicant: { required: ['taxId'] } });
    const second = await create(plain());
    expect(second.status).toBe(422);
    expect(second.body.error.code).toBe('requirements_not_met');
    expect(second.body.error.message).toContain(`version ${v2}`);
    expect(fieldsOf(second.body.error.details)).toEqual(['applicant.taxId']);
    const v3 = await mustSet({});
    const third = await create(plain());
    expect(third.status).toBe(200);
    expect((await stack.api('GET', `/v1/submissions/${third.body.submissionId}`, { token })).body.requirements.version).toBe(v3);
  });
});

describe('attachment rules and currentlyDue', () => {
  it("the create's result is the submission, requirements included, with its receipt (issue 49, 2)", async () => {
    const version = await mustSet({ attachments: [{ documentType: 'loss_run', min: 1 }] });
    const made = await create(body());
    expect(made.status).toBe(200);
    expect(made.body.requirements).toEqual({ version, currentlyDue: ['attachments.loss_run'] });
    // Every field GET /v1/submissions/{id} shows, equal, and the receipt beside them.
    const { receipt, ...submission } = made.body as Record<string, unknown>;
    expect(receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const read = await stack.api('GET', `/v1/submissions/${made.body.submissionId}`, { token });
    expect(submission).toEqual(read.body);
    // The job's result, and the job.succeeded event's, are the same result.
    const jobId = made.headers.get('job-id')!;
    const job = await stack.api('GET', `/v1/jobs/${jobId}`, { token });
    expect(job.body).toMatchObject({ status: 'succeeded', result: made.body });
    const event = await until('the job.succeeded event', async () => (await eventsOf(token, 'job.succeeded')).find((e) => e.data.id === jobId));
    expect(event.data.result).toEqual(made.body);
    // A result stored before results carried the whole submission is still read back, and the document
    // (every response here is checked against it) still describes it.
    await stack.sql(
      `UPDATE job.jobs SET result = result - ARRAY['externalRef', 'submissionType', 'effectiveDate', 'productId', 'applicant', 'principalId',
         'createdAt', 'updatedAt', 'requirements', 'risk'] WHERE job_id = $1`,
      [jobId],
    );
    // Read through the job list: GET /v1/jobs/{id} answers a settled job from the gateway's memory
    // (a settled job never changes), which still holds the result as it was stored.
    const list = await stack.api('GET', '/v1/jobs?limit=100', { token });
    expect(list.status).toBe(200);
    const old = list.body.items.find((j: { id: string }) => j.id === jobId);
    expect(Object.keys(old.result).sort()).toEqual(['clearance', 'receipt', 'status', 'submissionId', 'submissionName']);
  });

  it('enforces max, media type and size, and keeps currentlyDue with its events', async () => {
    await mustSet({ attachments: [{ documentType: 'loss_run', min: 1, max: 1, mediaTypes: ['application/pdf'], maxBytes: 2000 }] });
    const made = await create(body());
    expect(made.status).toBe(200);
    const sid = made.body.submissionId as string;
    const read = async () => (await stack.api('GET', `/v1/submissions/${sid}`, { token })).body;
    expect((await read()).requirements.currentlyDue).toEqual(['attachments.loss_run']);
    const send = (fields: Record<string, string>, file: { contentType: string; fileName: string; size: number }) =>
      upload(stack, token, sid, multipartBytes({ fileName: file.fileName, contentType: file.contentType, data: fileBytes(file.contentType, file.size) }, fields));

    const wrongType = await send({ documentType: 'loss_run' }, { contentType: 'text/plain', fileName: 'l.txt', size: 100 });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.error.code).toBe('requirements_not_met');
    expect(fieldsOf(wrongType.body.error.details)).toEqual(['contentType']);
    const tooBig = await send({ documentType: 'loss_run' }, { contentType: 'application/pdf', fileName: 'l.pdf', size: 3000 });
    expect(fieldsOf(tooBig.body.error.details)).toEqual(['size']);
    // A type the product does not list has no rule beyond the generic ones.
    expect((await send({ documentType: 'other' }, { contentType: 'text/plain', fileName: 'o.txt', size: 5000 })).status).toBe(200);
    expect((await read()).requirements.currentlyDue).toEqual(['attachments.loss_run']);

    const ok = await send({ documentType: 'loss_run' }, { contentType: 'application/pdf', fileName: 'l.pdf', size: 1000 });
    expect(ok.status).toBe(200);
    expect((await read()).requirements.currentlyDue).toEqual([]);
    const full = await send({ documentType: 'loss_run' }, { contentType: 'application/pdf', fileName: 'l2.pdf', size: 1000 });
    expect(full.status).toBe(422);
    expect(fieldsOf(full.body.error.details)).toEqual(['documentType']);

    const del = await stack.api('DELETE', `/v1/submissions/${sid}/attachments/${ok.body.attachmentId}`, { token, headers: { prefer: 'wait=20' } });
    expect(del.status).toBe(200);
    expect((await read()).requirements.currentlyDue).toEqual(['attachments.loss_run']);

    const updates = await until('two submission.requirements_updated events', async () => {
      const items = (await eventsOf(token, 'submission.requirements_updated')).filter((e) => e.data.submissionId === sid);
      return items.length >= 2 && items;
    });
    expect(updates.map((e) => (e.data.requirements as { currentlyDue: string[] }).currentlyDue)).toEqual([[], ['attachments.loss_run']]);
    // Only the owner hears about its submission, or sees it: the catalogue is shared, submissions are not.
    expect((await eventsOf(otherToken, 'submission.requirements_updated')).filter((e) => e.data.submissionId === sid)).toEqual([]);
    expect((await stack.api('GET', `/v1/submissions/${sid}`, { token: otherToken })).status).toBe(404);
  });
});

describe('one rule set', () => {
  it('Ajv 2020 on the published schema, validate and a real create agree on valid/invalid and the failing fields', async () => {
    const version = await mustSet({ applicant: { required: ['taxId'] }, effectiveDate: { minDaysAhead: 2, maxDaysAhead: 20 } });
    const req = await stack.api('GET', `/v1/products/${PRODUCT}/requirements`, { token });
    expect(req.body.version).toBe(version);
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const schemaOk = ajv.compile(req.body.submissionSchema);
    const schemaFields = (b: unknown): string[] =>
      schemaOk(b)
        ? []
        : (schemaOk.errors ?? []).map((e) => {
            const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
            const name = e.keyword === 'required' ? (e.params as { missingProperty: string }).missingProperty : undefined;
            return name ? (base ? `${base}.${name}` : name) : base;
          });

    const taxIds = fc.oneof(fc.constant(undefined), fc.constantFrom('12-3456789', '123456789', '12345678', '1234-56789', 'abcdefghi'));
    // 'Tab\tCo': the gateway refuses control characters in any string; the schema says so too.
    const legalNames = fc.constantFrom('Acme', 'Widget Co', '   ', 'Tab\tCo');
    const days = fc.integer({ min: -5, max: 30 });
    const addresses = fc.oneof(fc.constant(undefined), fc.constant(ADDRESS), fc.constant({ ...ADDRESS, country: 'XX' }));
    await fc.assert(
      fc.asyncProperty(taxIds, legalNames, days, addresses, async (taxId, legalName, d, address) => {
        const applicant: Record<string, unknown> = { legalName };
        if (taxId !== undefined) applicant.taxId = taxId;
        if (address !== undefined) applicant.address = address;
        const b = body({ effectiveDate: inDays(d), applicant });
        const bySchema = [...new Set(schemaFields(b))].sort();
        const inWindow = d >= 2 && d <= 20;
        const v = await validate(b);
        expect(v.status).toBe(200);
        const byValidate = fieldsOf(v.body.errors);
        // The schema cannot know today: validate adds the window, nothing else.
        expect(byValidate).toEqual([...new Set([...bySchema, ...(inWindow ? [] : ['effectiveDate'])])].sort());
        const c = await create(b);
        if (v.body.valid) {
          expect(c.status).toBe(200);
        } else if (c.status === 400) {
          // A create stops at its first stage: the generic schema's 400 names a subset of the fields.
          expect(byValidate).toEqual(expect.arrayContaining(fieldsOf(c.body.error.details)));
          expect(fieldsOf(c.body.error.details).length).toBeGreaterThan(0);
        } else {
          expect(c.status).toBe(422);
          expect(c.body.error.code).toBe('requirements_not_met');
          expect(fieldsOf(c.body.error.details)).toEqual(byValidate);
        }
      }),
      { numRuns: 50 },
    );
  });
});
