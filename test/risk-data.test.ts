// Risk data (API.md "Risk data"), end to end on the real stack: a product's requirements carry a risk
// JSON Schema (the admin command refuses one Ajv cannot compile in strict mode, naming the part); the
// published submissionSchema requires risk and embeds it; the create job fails 422
// requirements_not_met naming risk.<field> for a missing or bad risk, validate says the same, and Ajv
// on the published schema agrees with the server; a created submission shows its risk (null without).
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { useStack } from './support/use-stack.js';
import { DEMO_REQUIREMENTS, DEMO_RISK } from '../scripts/demo/product.mjs';

const RISKY = randomUUID();
const PLAIN = randomUUID();
const FILES = mkdtempSync(join(tmpdir(), 'risk-data-'));
let token: string;

const setRequirements = (doc: unknown, product = RISKY) => {
  const file = join(FILES, `${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify(doc));
  return stack.adminRaw('product', 'requirements', 'set', '--id', product, file);
};

const stack = useStack(async (stack) => {
  await stack.startAll();
  await stack.admin('product', 'add', '--id', RISKY, '--name', 'Risky GL');
  await stack.admin('product', 'add', '--id', PLAIN, '--name', 'Plain GL');
  const r = await setRequirements({ risk: DEMO_REQUIREMENTS.risk });
  expect(r.code, r.stderr).toBe(0);
  token = await stack.token(await stack.createClient());
});

const body = (over: Record<string, unknown> = {}) => ({
  externalRef: `ref-${randomUUID()}`,
  submissionType: 'application',
  effectiveDate: '2030-01-01',
  productId: RISKY,
  applicant: { legalName: 'Acme Holdings LLC' },
  ...over,
});
const create = (json: unknown) => stack.api('POST', '/v1/submissions', { token, json, headers: { prefer: 'wait=20' } });
const validate = (json: unknown) => stack.api('POST', '/v1/submissions/validate', { token, json });
const fieldsOf = (list: { field: string }[] | undefined) => [...new Set((list ?? []).map((e) => e.field))].sort();

describe('a risk schema in the requirements', () => {
  it.each([
    [{ risk: { type: 'object', properties: { a: { type: 'string', frobnicate: true } } } }, 'risk is not a schema Ajv 2020 compiles in strict mode'],
    [{ risk: { type: 'object', properties: { a: { type: 'string', format: 'email' } } } }, 'risk is not a schema Ajv 2020 compiles in strict mode'],
    [{ risk: { type: 'array' } }, 'risk.type must be "object"'],
    [{ risk: { type: 'object', properties: { a: { $ref: '#/$defs/x' } } } }, 'risk.properties.a.$ref is not allowed'],
    [{ risk: 'annualRevenue' }, 'risk must be a JSON Schema object'],
  ])('is refused when Ajv cannot compile it in strict mode or it is not self-contained: %j', async (doc, named) => {
    const before = (await stack.api('GET', `/v1/products/${RISKY}`, { token })).body.requirementsVersion;
    const r = await setRequirements(doc);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(named);
    expect((await stack.api('GET', `/v1/products/${RISKY}`, { token })).body.requirementsVersion).toBe(before);
  });

  it('is embedded in the published submissionSchema, which requires risk', async () => {
    const req = await stack.api('GET', `/v1/products/${RISKY}/requirements`, { token });
    expect(req.status).toBe(200);
    expect(req.body.submissionSchema.required).toContain('risk');
    expect(req.body.submissionSchema.properties.risk).toEqual(DEMO_REQUIREMENTS.risk);
    const plain = await stack.api('GET', `/v1/products/${PLAIN}/requirements`, { token });
    expect(plain.body.submissionSchema.required).not.toContain('risk');
  });
});

describe('the create job and validate', () => {
  it.each([
    ['missing', body(), ['risk']],
    ['a missing field', body({ risk: { annualRevenue: 100, industry: 'retail' } }), ['risk.employees']],
    ['a wrong type', body({ risk: { ...DEMO_RISK, annualRevenue: '2500000' } }), ['risk.annualRevenue']],
    ['below the minimum', body({ risk: { ...DEMO_RISK, employees: -1 } }), ['risk.employees']],
    ['not in the enum', body({ risk: { ...DEMO_RISK, industry: 'mining' } }), ['risk.industry']],
    ['an unknown field', body({ risk: { ...DEMO_RISK, floors: 3 } }), ['risk.floors']],
    ['several at once', body({ risk: { annualRevenue: -5, industry: 'mining' } }), ['risk.annualRevenue', 'risk.employees', 'risk.industry']],
  ])('fails 422 requirements_not_met naming risk.<field> (%s), and validate names the same', async (_, json, fields) => {
    const r = await create(json);
    expect(r.status, r.text).toBe(422);
    expect(r.body.error.code).toBe('requirements_not_met');
    expect(fieldsOf(r.body.error.details)).toEqual(fields);
    const v = await validate(json);
    expect(v.status).toBe(200);
    expect(v.body.valid).toBe(false);
    expect(fieldsOf(v.body.errors)).toEqual(fields);
  });

  it('creates a submission with a good risk, shows it in the record; a product without a schema takes any risk object, or none (null)', async () => {
    const ok = await create(body({ risk: DEMO_RISK }));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.risk).toEqual(DEMO_RISK);
    const got = await stack.api('GET', `/v1/submissions/${ok.body.submissionId}`, { token });
    expect(got.body.risk).toEqual(DEMO_RISK);
    const free = await create(body({ productId: PLAIN, risk: { anything: ['goes', 1] } }));
    expect(free.status, free.text).toBe(200);
    expect(free.body.risk).toEqual({ anything: ['goes', 1] });
    const none = await create(body({ productId: PLAIN }));
    expect(none.status, none.text).toBe(200);
    expect(none.body.risk).toBeNull();
    expect((await stack.api('GET', `/v1/submissions/${none.body.submissionId}`, { token })).body.risk).toBeNull();
    const notObject = await create(body({ productId: PLAIN, risk: [1] }));
    expect(notObject.status).toBe(400);
    expect(fieldsOf(notObject.body.error.details)).toEqual(['risk']);
  });

  it('agrees with Ajv on the published submissionSchema', async () => {
    const schema = (await stack.api('GET', `/v1/products/${RISKY}/requirements`, { token })).body.submissionSchema;
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const accepts = ajv.compile(schema);
    const cases = [
      body({ risk: DEMO_RISK }),
      body({ risk: { ...DEMO_RISK, employees: 1.5 } }),
      body({ risk: { ...DEMO_RISK, annualRevenue: 0 } }),
      body({ risk: { ...DEMO_RISK, annualRevenue: 100000000001 } }),
      body({ risk: {} }),
      body(),
    ];
    for (const json of cases) {
      const v = await validate(json);
      expect(v.body.valid, JSON.stringify(json)).toBe(accepts(json));
    }
    const sent = await create(cases[1]);
    expect(sent.status).toBe(accepts(cases[1]) ? 200 : 422);
  });
});
