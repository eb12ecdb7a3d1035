import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { isCalendarDate } from './time.js';
import { parseRequirements, RequirementsError, currentlyDue } from './requirements.js';
import { CALENDAR_DATE_PATTERN, checkSubmission, daysAhead, submissionSchemaFor, type ProductRules } from './submission-rules.js';

const PRODUCT = '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b';
const rules = (doc: unknown, version = 2): ProductRules => ({ productId: PRODUCT, active: true, requirementsVersion: version, requirements: parseRequirements(doc) });
const body = (over: Record<string, unknown> = {}) => ({
  externalRef: 'r-1',
  submissionType: 'application',
  effectiveDate: '2030-01-01',
  productId: PRODUCT,
  applicant: { legalName: 'Acme' },
  ...over,
});

describe('the published submission schema', () => {
  it('is JSON Schema 2020-12 that Ajv 2020 compiles in strict mode without a warning', () => {
    const warnings: unknown[] = [];
    const logger = { log: (...a: unknown[]) => warnings.push(a), warn: (...a: unknown[]) => warnings.push(a), error: (...a: unknown[]) => warnings.push(a) };
    const ajv = new Ajv2020({ strict: true, allErrors: true, logger });
    const schema = submissionSchemaFor(rules({ applicant: { required: ['taxId', 'address'] } }));
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const validate = ajv.compile(schema);
    expect(warnings).toEqual([]);
    expect(validate(body())).toBe(false);
    expect(validate(body({ applicant: { legalName: 'Acme', taxId: '12-3456789', address: { line1: 'a', city: 'b', region: 'c', postalCode: 'd', country: 'US' } } }))).toBe(true);
  });

  it('says what a real calendar date is exactly as the gateway does (format date)', () => {
    const re = new RegExp(CALENDAR_DATE_PATTERN, 'u');
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), (y, m, d) => {
        const s = `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
        expect(re.test(s)).toBe(isCalendarDate(s));
      }),
      { numRuns: 3000 },
    );
    for (const s of ['2024-02-29', '2000-02-29', '1900-02-29', '2023-02-29', '0000-01-01', '0400-02-29']) expect(re.test(s)).toBe(isCalendarDate(s));
  });
});

describe('checkSubmission', () => {
  it('names each field a product requires, the date window and an unknown product', () => {
    const p = rules({ applicant: { required: ['taxId'] }, effectiveDate: { minDaysAhead: 1, maxDaysAhead: 30 } });
    expect(checkSubmission(body({ effectiveDate: '2030-01-01' }), p, { today: '2030-01-01', sandbox: false }).map((e) => [e.field, e.code])).toEqual([
      ['applicant.taxId', 'required'],
      ['effectiveDate', 'out_of_window'],
    ]);
    expect(checkSubmission(body({ effectiveDate: '2030-01-05', applicant: { legalName: 'A', taxId: '123456789' } }), p, { today: '2030-01-01', sandbox: false })).toEqual([]);
    expect(checkSubmission(body(), undefined, { today: '2030-01-01', sandbox: false }).map((e) => e.code)).toEqual(['unknown_product']);
    expect(checkSubmission(body({ externalRef: 'sandbox:nope' }), p, { today: '2029-12-25', sandbox: true }).map((e) => e.field)).toEqual(['applicant.taxId', 'externalRef']);
  });

  it('counts days in UTC calendar days', () => {
    expect(daysAhead('2024-03-01', '2024-02-28')).toBe(2);
    expect(daysAhead('2023-12-31', '2024-01-01')).toBe(-1);
  });
});

describe('parseRequirements', () => {
  const problems = (doc: unknown) => {
    try {
      parseRequirements(doc);
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(RequirementsError);
      return (err as RequirementsError).problems.map((p) => p.path);
    }
  };
  it('names every bad part', () => {
    expect(problems({ applicant: { required: ['ssn'] } })).toEqual(['applicant.required[0]']);
    expect(problems({ effectiveDate: { minDaysAhead: -1 } })).toEqual(['effectiveDate.minDaysAhead']);
    expect(problems({ effectiveDate: { minDaysAhead: 10, maxDaysAhead: 5 } })).toEqual(['effectiveDate']);
    expect(problems({ attachments: [{ documentType: 'loss_run', min: 3, max: 1 }] })).toEqual(['attachments[0]']);
    expect(problems({ attachments: [{ documentType: 'loss_run', mediaTypes: ['pdf'] }] })).toEqual(['attachments[0].mediaTypes[0]']);
    expect(problems({ attachments: [{ documentType: 'acord_125', min: 1 }] })).toEqual(['attachments[0].documentType']);
    expect(problems({ colour: 'red' })).toEqual(['colour']);
    expect(problems([])).toEqual(['(document)']);
  });
  it('normalizes a good document and counts what is due', () => {
    const r = parseRequirements({ attachments: [{ documentType: 'loss_run', min: 2, mediaTypes: ['application/pdf'] }, { documentType: 'financials', max: 1 }] });
    expect(r.attachments[1]).toEqual({ documentType: 'financials', min: 0, max: 1, mediaTypes: [], maxBytes: null });
    expect(currentlyDue(r.attachments, { loss_run: 1 })).toEqual(['attachments.loss_run']);
    expect(currentlyDue(r.attachments, { loss_run: 2 })).toEqual([]);
  });
});

describe('a risk schema (API.md "Risk data")', () => {
  const RISK = {
    type: 'object',
    additionalProperties: false,
    required: ['annualRevenue'],
    properties: { annualRevenue: { type: 'number', minimum: 0 }, industry: { type: 'string', enum: ['retail', 'office'] } },
  };
  const risky = (version = 77): ProductRules => rules({ risk: RISK }, version);

  it('is kept by parseRequirements, and refused naming the part when Ajv cannot compile it in strict mode or it is not self-contained', () => {
    expect(parseRequirements({ risk: RISK }).risk).toEqual(RISK);
    expect(parseRequirements({}).risk).toBeUndefined();
    const problems = (risk: unknown) => {
      try {
        parseRequirements({ risk });
        return [];
      } catch (err) {
        return (err as RequirementsError).problems.map((p) => p.path);
      }
    };
    expect(problems({ type: 'object', properties: { a: { type: 'string', colour: 'red' } } })).toEqual(['risk']);
    expect(problems({ type: 'object', properties: { a: { type: 'string', format: 'email' } } })).toEqual(['risk']);
    expect(problems({ type: 'string' })).toEqual(['risk.type']);
    expect(problems({ type: 'object', $id: 'urn:x', properties: { a: { $ref: '#/x' } } })).toEqual(['risk.$id', 'risk.properties.a.$ref']);
    expect(problems([RISK])).toEqual(['risk']);
  });

  it('makes risk required in the published schema and is enforced as Ajv enforces it, naming risk.<field>', () => {
    const schema = submissionSchemaFor(risky());
    expect(schema.required).toContain('risk');
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const accepts = ajv.compile(schema);
    const cases: [unknown, string[]][] = [
      [body({ risk: { annualRevenue: 10, industry: 'retail' } }), []],
      [body(), ['risk']],
      [body({ risk: {} }), ['risk.annualRevenue']],
      [body({ risk: { annualRevenue: -1, industry: 'mining' } }), ['risk.annualRevenue', 'risk.industry']],
      [body({ risk: { annualRevenue: 1, extra: true } }), ['risk.extra']],
      [body({ risk: 'big' }), ['risk']],
    ];
    for (const [b, fields] of cases) {
      const errors = checkSubmission(b, risky(), { today: '2026-01-01', sandbox: false });
      expect(errors.map((e) => e.field).sort(), JSON.stringify(b)).toEqual(fields);
      expect(accepts(b)).toBe(fields.length === 0);
    }
    // Without a risk schema: risk is optional, any object.
    expect(checkSubmission(body({ risk: { anything: 1 } }), rules({}, 78), { today: '2026-01-01', sandbox: false })).toEqual([]);
    expect(checkSubmission(body(), rules({}, 78), { today: '2026-01-01', sandbox: false })).toEqual([]);
  });
});
