// Rating as tables (API.md "Rating plan"): exact values, half-up rounding once at the end, the
// minimum premium, each factor path (incl. a missing value → default), every op, a float trap, the
// plan checks naming each bad part; and a property: rate never throws and is deterministic for any
// submission the product's schema accepts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { NO_REQUIREMENTS } from './requirements.js';
import { submissionSchemaFor } from './submission-rules.js';
import { optionProblems, parseRatingPlan, rate, RULE_OPS, type RatingPlan, type RatingRule } from './rating.js';

const PRODUCT = '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b';

/** A fixed risk schema, as an operator would set it with the requirements. */
const RISK = {
  type: 'object',
  additionalProperties: false,
  required: ['annualRevenue', 'employees', 'industry'],
  properties: {
    annualRevenue: { type: 'number', minimum: 0, maximum: 1e12 },
    employees: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    industry: { type: 'string', enum: ['retail', 'office', 'restaurant', 'construction'] },
    yearsInBusiness: { type: 'integer', minimum: 0, maximum: 500 },
    hasSprinklers: { type: 'boolean' },
    sicCode: { type: 'string', maxLength: 8 },
  },
};

/** The product's published submissionSchema, RISK embedded (and `risk` required). */
const SCHEMA = submissionSchemaFor({ productId: PRODUCT, requirementsVersion: 2, requirements: { ...NO_REQUIREMENTS, risk: RISK } });

const PLAN_JSON = {
  currency: 'USD',
  exposure: { field: 'risk.annualRevenue', per: '1000' },
  rate: '1.25',
  factors: [
    { field: 'risk.industry', values: { retail: '1', office: '0.85', restaurant: '1.2' }, default: '1.5' },
    { field: 'applicant.address.region', values: { CA: '1.1', NY: '1.15' }, default: '1' },
    { field: 'risk.yearsInBusiness', values: { '0': '1.3', '1': '1.2' }, default: '1' },
  ],
  options: { limit: { '1000000': '1', '2000000': '1.6' }, retention: { '0': '1.1', '10000': '1', '25000': '0.9' } },
  minimumPremium: '500.00',
  refer: [
    { field: 'risk.annualRevenue', op: 'gt', value: 50_000_000, code: 'revenue_above_authority' },
    { field: 'risk.industry', op: 'eq', value: 'construction', code: 'construction_review' },
  ],
  decline: [{ field: 'risk.employees', op: 'gt', value: 5000, code: 'too_many_employees' }],
  validDays: 30,
  referralHours: 24,
};

function plan(over: Partial<Record<keyof typeof PLAN_JSON, unknown>> = {}): RatingPlan {
  const r = parseRatingPlan({ ...PLAN_JSON, ...over }, SCHEMA);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.plan;
}

const submission = (risk: Record<string, unknown>, applicant: Record<string, unknown> = { legalName: 'Acme' }) => ({
  externalRef: 'r-1',
  submissionType: 'application',
  effectiveDate: '2030-01-01',
  productId: PRODUCT,
  applicant,
  risk,
});
const ONE_M = { limit: '1000000', retention: '10000' };

describe('rate: premium', () => {
  it.each([
    // annualRevenue, industry, region, option, expected premium
    [1_000_000, 'retail', undefined, ONE_M, '1250.00'],
    [1_000_000, 'office', undefined, ONE_M, '1062.50'],
    [1_000_000, 'restaurant', 'CA', ONE_M, '1650.00'],
    [1_000_000, 'retail', 'NY', { limit: '2000000', retention: '0' }, '2530.00'],
    [2_345_678.91, 'office', 'NY', { limit: '2000000', retention: '25000' }, '4127.22'], // 2345.67891 × 1.25 × 0.85 × 1.15 × 1.6 × 0.9 = 4127.222042145
    [400_000, 'retail', undefined, ONE_M, '500.00'], // 500.00 exactly: the minimum
    [399_999, 'retail', undefined, ONE_M, '500.00'], // below the minimum: the minimum
    [400_008, 'retail', undefined, ONE_M, '500.01'],
    [0, 'retail', undefined, ONE_M, '500.00'],
  ])('revenue %s, %s, region %s, %o → %s', (revenue, industry, region, option, expected) => {
    const applicant = region ? { legalName: 'Acme', address: { line1: 'a', city: 'b', region, postalCode: 'c', country: 'US' } } : { legalName: 'Acme' };
    const r = rate(plan(), submission({ annualRevenue: revenue, employees: 10, industry }, applicant), option);
    expect(r.premium).toEqual({ amount: expected, currency: 'USD' });
  });

  it.each([
    // exposure value, per, rate, expected: half-up at the last cent, once, at the end
    [1005, '1000', '1', '1.01'], // 1.005 → 1.01 (binary floating point: 1.00499999… → 1.00)
    [1004.9, '1000', '1', '1.00'], // 1.0049 → 1.00
    [1015, '1000', '1', '1.02'], // 1.015 → 1.02 (floats: 1.01499999… → 1.01)
    [2675, '1000', '1', '2.68'], // 2.675 → 2.68 (floats: 2.67499999… → 2.67)
    [1, '3', '1', '0.33'], // 0.3333… → 0.33
    [2, '3', '1', '0.67'], // 0.6666… → 0.67
    [1, '8', '1', '0.13'], // 0.125 → 0.13 (half-up, not half-even's 0.12)
    [3, '8', '1', '0.38'], // 0.375 → 0.38
    [5, '8', '0.1', '0.06'], // 0.0625 → 0.06
    [0.1, '1', '0.2', '0.02'], // 0.1 × 0.2 = 0.02 exactly (floats: 0.020000000000000004)
  ])('exposure %s ÷ %s × rate %s → %s', (exposure, per, rateValue, expected) => {
    const p = plan({ exposure: { field: 'risk.annualRevenue', per }, rate: rateValue, factors: [], minimumPremium: '0', options: { limit: { '1': '1' }, retention: { '0': '1' } } });
    expect(rate(p, submission({ annualRevenue: exposure, employees: 1, industry: 'retail' }), { limit: '1', retention: '0' }).premium.amount).toBe(expected);
  });

  it('rounds once, at the end: per-factor rounding to cents would give another premium', () => {
    // 1000 × 0.333 × 0.333 ÷ 1 = 110.889 → 110.89; rounding 333.00 then × 0.333 = 110.889 too, so use
    // factors whose rounded steps drift: 10.005 × 1.5 = 15.0075 → 15.01; (10.01 × 1.5 = 15.015 → 15.02).
    const p = plan({
      exposure: { field: 'risk.annualRevenue', per: '1' },
      rate: '1.0005',
      factors: [{ field: 'risk.industry', values: {}, default: '1.5' }],
      minimumPremium: '0',
      options: { limit: { '1': '1' }, retention: { '0': '1' } },
    });
    expect(rate(p, submission({ annualRevenue: 10, employees: 1, industry: 'retail' }), { limit: '1', retention: '0' }).premium.amount).toBe('15.01');
  });

  it('stays exact with many long factors (checked against BigInt arithmetic)', () => {
    const big = (v: string): [bigint, number] => [BigInt(v.replace('.', '')), v.includes('.') ? v.length - v.indexOf('.') - 1 : 0];
    const values = ['1.0000000001', '0.9999999999', '1.2345678901', '0.3333333333', '2.7182818284', '1.4142135623', '0.5772156649', '1.6180339887'];
    const factors = Array.from({ length: 40 }, (_, i) => ({ field: 'risk.industry', values: {}, default: values[i % values.length]! }));
    const exposure = 987654321.123;
    const p = plan({ exposure: { field: 'risk.annualRevenue', per: '7' }, rate: '3.1415926535', factors, minimumPremium: '0', options: { limit: { '1': '1.0000000003' }, retention: { '0': '0.9999999997' } } });
    let [num, scale] = big(String(exposure));
    for (const f of ['3.1415926535', ...factors.map((f) => f.default), '1.0000000003', '0.9999999997']) {
      const [n, s] = big(f);
      num *= n;
      scale += s;
    }
    const den = 7n * 10n ** BigInt(scale);
    let cents = (num * 100n) / den;
    if (((num * 100n) % den) * 2n >= den) cents += 1n;
    const expected = `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;
    expect(rate(p, submission({ annualRevenue: exposure, employees: 1, industry: 'retail' }), { limit: '1', retention: '0' }).premium.amount).toBe(expected);
  });

  it('stays exact at a half cent reached through long intermediate products', () => {
    // 1005 × (2⁻¹⁰)²⁵ × 1024²⁵ ÷ 1000 = 1.005 exactly, through a product of about 180 digits: any
    // rounding on the way leaves it a hair off the half cent.
    const factors = [
      ...Array.from({ length: 25 }, () => ({ field: 'risk.industry', values: {}, default: '0.0009765625' })),
      ...Array.from({ length: 25 }, () => ({ field: 'risk.employees', values: {}, default: '1024' })),
    ];
    for (const [exposure, expected] of [[1005, '1.01'], [1015, '1.02'], [2675, '2.68'], [1004.999, '1.00']] as const) {
      const p = plan({ exposure: { field: 'risk.annualRevenue', per: '1000' }, rate: '1', factors, minimumPremium: '0', options: { limit: { '1': '1' }, retention: { '0': '1' } } });
      expect(rate(p, submission({ annualRevenue: exposure, employees: 3, industry: 'retail' }), { limit: '1', retention: '0' }).premium.amount).toBe(expected);
    }
  });

  it('is a case where binary floating point rounds the other way', () => {
    const floatCents = Math.round(((1005 / 1000) * 1) * 100) / 100;
    expect(floatCents).toBe(1); // the float answer
    const p = plan({ exposure: { field: 'risk.annualRevenue', per: '1000' }, rate: '1', factors: [], minimumPremium: '0', options: { limit: { '1': '1' }, retention: { '0': '1' } } });
    expect(rate(p, submission({ annualRevenue: 1005, employees: 1, industry: 'retail' }), { limit: '1', retention: '0' }).premium.amount).toBe('1.01');
  });

  it('takes every factor path, and a missing or unlisted value takes the default', () => {
    const base = { annualRevenue: 1_000_000, employees: 10 };
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{ ...base, industry: 'retail', yearsInBusiness: 0 }, { legalName: 'A' }, '1625.00'], // years 0 → 1.3
      [{ ...base, industry: 'retail', yearsInBusiness: 1 }, { legalName: 'A' }, '1500.00'], // years 1 → 1.2
      [{ ...base, industry: 'retail', yearsInBusiness: 7 }, { legalName: 'A' }, '1250.00'], // unlisted → default 1
      [{ ...base, industry: 'retail' }, { legalName: 'A' }, '1250.00'], // missing → default 1
      [{ ...base, industry: 'construction' }, { legalName: 'A' }, '1875.00'], // unlisted industry → default 1.5
      [{ ...base, industry: 'retail' }, { legalName: 'A', address: { line1: 'a', city: 'b', region: 'TX', postalCode: 'c', country: 'US' } }, '1250.00'],
      [{ ...base, industry: 'retail' }, { legalName: 'A', address: { line1: 'a', city: 'b', region: 'CA', postalCode: 'c', country: 'US' } }, '1375.00'],
    ];
    for (const [risk, applicant, expected] of cases) expect(rate(plan(), submission(risk, applicant), ONE_M).premium.amount, JSON.stringify([risk, applicant])).toBe(expected);
  });

  it('rates a missing exposure as zero (the minimum premium) instead of throwing', () => {
    expect(rate(plan(), { risk: {} }, ONE_M).premium.amount).toBe('500.00');
    expect(rate(plan(), {}, ONE_M).premium.amount).toBe('500.00');
    expect(rate(plan(), { risk: { annualRevenue: 'lots' } }, ONE_M).premium.amount).toBe('500.00');
  });
});

describe('rate: refer and decline rules', () => {
  const rule = (op: string, value: unknown, field = 'risk.employees'): RatingPlan => plan({ decline: [{ field, op, value, code: 'hit' }], refer: [] });
  const hits = (p: RatingPlan, risk: Record<string, unknown>) => rate(p, submission({ annualRevenue: 1, industry: 'retail', ...risk }), ONE_M).decline.length === 1;

  it.each([
    ['eq', 10, 10, true],
    ['eq', 10, 10.0, true],
    ['eq', 10, 11, false],
    ['ne', 10, 11, true],
    ['ne', 10, 10, false],
    ['gt', 10, 11, true],
    ['gt', 10, 10, false],
    ['gte', 10, 10, true],
    ['gte', 10, 9, false],
    ['lt', 10, 9, true],
    ['lt', 10, 10, false],
    ['lte', 10, 10, true],
    ['lte', 10, 11, false],
    ['in', [1, 10, 100], 10, true],
    ['in', [1, 100], 10, false],
    ['nin', [1, 100], 10, true],
    ['nin', [1, 10], 10, false],
    ['eq', '10', 10, false], // a string is not the number
  ])('%s %o with employees %o → %s', (op, value, employees, expected) => {
    expect(hits(rule(op, value), { employees })).toBe(expected);
  });

  it('covers every op', () => {
    expect([...RULE_OPS].sort()).toEqual(['eq', 'gt', 'gte', 'in', 'lt', 'lte', 'ne', 'nin']);
  });

  it.each([
    ['eq', 'retail', 'retail', true],
    ['ne', 'retail', 'office', true],
    ['gt', 'office', 'retail', true], // code unit order
    ['lt', 'office', 'retail', false],
    ['in', ['office', 'retail'], 'retail', true],
    ['nin', ['office'], 'retail', true],
    ['gt', 5, 'retail', false], // a string and a number are not ordered
  ])('strings: %s %o with industry %o → %s', (op, value, industry, expected) => {
    expect(hits(rule(op, value, 'risk.industry'), { industry })).toBe(expected);
  });

  it('matches no rule on a missing value, whatever the op', () => {
    for (const op of RULE_OPS) {
      const value = op === 'in' || op === 'nin' ? [1] : 1;
      expect(hits(rule(op, value, 'risk.yearsInBusiness'), {}), op).toBe(false);
    }
  });

  it('lists every matching rule with its field, not just the first', () => {
    const p = plan({
      refer: [
        { field: 'risk.annualRevenue', op: 'gt', value: 50_000_000, code: 'revenue_above_authority' },
        { field: 'risk.industry', op: 'eq', value: 'construction', code: 'construction_review' },
        { field: 'risk.hasSprinklers', op: 'eq', value: false, code: 'no_sprinklers' },
      ],
      decline: [
        { field: 'risk.employees', op: 'gt', value: 5000, code: 'too_many_employees' },
        { field: 'risk.yearsInBusiness', op: 'lt', value: 1, code: 'new_venture' },
      ],
    });
    const r = rate(p, submission({ annualRevenue: 60_000_000, employees: 6000, industry: 'construction', yearsInBusiness: 0, hasSprinklers: false }), ONE_M);
    expect(r.refer).toEqual([
      { code: 'revenue_above_authority', field: 'risk.annualRevenue' },
      { code: 'construction_review', field: 'risk.industry' },
      { code: 'no_sprinklers', field: 'risk.hasSprinklers' },
    ]);
    expect(r.decline).toEqual([
      { code: 'too_many_employees', field: 'risk.employees' },
      { code: 'new_venture', field: 'risk.yearsInBusiness' },
    ]);
    expect(r.premium.amount).toBe('146250.00'); // still computed: 60000 × 1.25 × 1.5 (construction: default) × 1.3 (years 0)
  });
});

describe('optionProblems', () => {
  it.each([
    [{ limit: '1000000', retention: '10000' }, []],
    [{ limit: '3000000', retention: '10000' }, ['limit']],
    [{ limit: '1000000', retention: '5' }, ['retention']],
    [{ limit: '1000000.00', retention: '10000.0' }, ['limit', 'retention']],
    [{ limit: 'toString', retention: '__proto__' }, ['limit', 'retention']],
  ])('%o → %o', (option, expected) => {
    expect(optionProblems(plan(), option)).toEqual(expected);
  });
});

describe('parseRatingPlan', () => {
  const problems = (doc: unknown) => {
    const r = parseRatingPlan(doc, SCHEMA);
    return r.ok ? [] : r.problems.map((p) => p.path);
  };

  it('accepts the plan and keeps it as written', () => {
    const r = parseRatingPlan(PLAN_JSON, SCHEMA);
    expect(r).toEqual({ ok: true, plan: PLAN_JSON });
  });

  it.each([
    [{ ...PLAN_JSON, surcharge: '1' }, ['surcharge']],
    [{ ...PLAN_JSON, exposure: { field: 'risk.annualRevenue', per: '1000', unit: 'x' } }, ['exposure.unit']],
    [{ ...PLAN_JSON, exposure: { field: 'risk.annualRevenue', per: '0' } }, ['exposure.per']],
    [{ ...PLAN_JSON, exposure: { field: 'risk.annualRevenue', per: 1000 } }, ['exposure.per']],
    [{ ...PLAN_JSON, exposure: { field: 'risk.turnover', per: '1000' } }, ['exposure.field']],
    [{ ...PLAN_JSON, exposure: { field: 'risk.yearsInBusiness', per: '1' } }, ['exposure.field']], // not required
    [{ ...PLAN_JSON, exposure: { field: 'risk.industry', per: '1' } }, ['exposure.field']], // not a number
    [{ ...PLAN_JSON, rate: '-1.25' }, ['rate']],
    [{ ...PLAN_JSON, rate: '0' }, ['rate']],
    [{ ...PLAN_JSON, rate: 1.25 }, ['rate']],
    [{ ...PLAN_JSON, factors: [PLAN_JSON.factors[0], { field: 'risk.industry', values: { retail: '-1' }, default: '1' }] }, ['factors[1].values.retail']],
    [{ ...PLAN_JSON, factors: [PLAN_JSON.factors[0], { field: 'risk.industry', values: { retail: 'abc' }, default: '0' }] }, ['factors[1].values.retail', 'factors[1].default']],
    [{ ...PLAN_JSON, factors: [{ field: 'applicant.address.county', values: {}, default: '1' }] }, ['factors[0].field']],
    [{ ...PLAN_JSON, factors: [{ field: 'risk', values: {}, default: '1', weight: 2 }] }, ['factors[0].weight']],
    [{ ...PLAN_JSON, options: { limit: {}, retention: { '0': '1' } } }, ['options.limit']],
    [{ ...PLAN_JSON, options: { limit: { '1000000': '1' }, retention: {} } }, ['options.retention']],
    [{ ...PLAN_JSON, options: { limit: { '0': '1', '1e6': '1' }, retention: { '0': '0' } } }, ['options.limit.0', 'options.limit.1e6', 'options.retention.0']],
    [{ ...PLAN_JSON, minimumPremium: '-5' }, ['minimumPremium']],
    [{ ...PLAN_JSON, minimumPremium: '5.005' }, ['minimumPremium']],
    [{ ...PLAN_JSON, refer: [{ field: 'risk.employees', op: 'between', value: 1, code: 'x' }] }, ['refer[0].op']],
    [{ ...PLAN_JSON, decline: [{ field: 'risk.employees', op: 'in', value: 5, code: 'x' }] }, ['decline[0].value']],
    [{ ...PLAN_JSON, decline: [{ field: 'risk.employees', op: 'gt', value: [5], code: 'Bad Code' }] }, ['decline[0].value', 'decline[0].code']],
    [{ ...PLAN_JSON, decline: [{ field: 'risk.nope', op: 'eq', value: 1 }] }, ['decline[0].code', 'decline[0].field']],
    [{ ...PLAN_JSON, validDays: 0, referralHours: 1.5 }, ['validDays', 'referralHours']],
    [{ currency: 'usd' }, ['exposure', 'rate', 'factors', 'options', 'minimumPremium', 'refer', 'decline', 'validDays', 'referralHours', 'currency']],
    [[], ['(document)']],
  ].map(([doc, expected]) => [expected, doc] as const))('refuses, naming %o', (expected, doc) => {
    expect(problems(doc).sort()).toEqual([...expected].sort());
  });

  it('refuses a field path that a schema without risk cannot produce', () => {
    const plain = submissionSchemaFor({ productId: PRODUCT, requirementsVersion: 1, requirements: NO_REQUIREMENTS });
    const r = parseRatingPlan(PLAN_JSON, plain);
    expect(r.ok ? [] : r.problems.map((p) => p.path)).toEqual(['exposure.field', 'factors[0].field', 'factors[2].field', 'refer[0].field', 'refer[1].field', 'decline[0].field']);
  });
});

describe('rate: property', () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  const accepts = ajv.compile(SCHEMA);
  const scalar = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
  const text = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ]{0,19}$/);
  const risk = fc.record(
    {
      annualRevenue: fc.oneof(fc.double({ min: 0, max: 1e12, noNaN: true }), fc.integer({ min: 0, max: 1e9 }), fc.constant(0.005)),
      employees: fc.integer({ min: 0, max: 1_000_000 }),
      industry: fc.constantFrom('retail', 'office', 'restaurant', 'construction'),
      yearsInBusiness: fc.integer({ min: 0, max: 500 }),
      hasSprinklers: fc.boolean(),
      sicCode: fc.string({ maxLength: 8 }),
    },
    { requiredKeys: ['annualRevenue', 'employees', 'industry'] },
  );
  const address = fc.record({ line1: text, city: text, region: fc.oneof(fc.constantFrom('CA', 'NY', 'TX'), text), postalCode: text, country: fc.constantFrom('US', 'CA', 'GB') });
  const body = fc.record({
    externalRef: text,
    submissionType: fc.constant('application'),
    effectiveDate: fc.constantFrom('2030-01-01', '2028-02-29'),
    productId: fc.constant(PRODUCT),
    applicant: fc.record({ legalName: text, address }, { requiredKeys: ['legalName'] }),
    risk,
  });
  const ruleArb: fc.Arbitrary<RatingRule> = fc
    .tuple(fc.constantFrom('risk.annualRevenue', 'risk.employees', 'risk.industry', 'risk.yearsInBusiness', 'risk.hasSprinklers', 'applicant.address.region'), fc.constantFrom(...RULE_OPS), scalar, fc.array(scalar, { minLength: 1, maxLength: 4 }))
    .map(([field, op, one, many]) => ({ field, op, value: op === 'in' || op === 'nin' ? many : op.startsWith('g') || op.startsWith('l') ? (typeof one === 'number' || typeof one === 'string' ? one : 0) : one, code: 'r' }));
  const option = fc.record({ limit: fc.constantFrom('1000000', '2000000'), retention: fc.constantFrom('0', '10000', '25000') });

  it('never throws and is deterministic for any submission the schema accepts', () => {
    fc.assert(
      fc.property(body, option, fc.array(ruleArb, { maxLength: 6 }), (b, opt, rules) => {
        expect(accepts(b)).toBe(true);
        const p = { ...plan(), refer: rules, decline: rules.slice(0, 2) };
        const first = rate(p, b, opt);
        expect(first.premium.amount).toMatch(/^[0-9]+\.[0-9]{2}$/);
        expect(Number(first.premium.amount)).toBeGreaterThanOrEqual(500);
        expect(rate(p, structuredClone(b), { ...opt })).toEqual(first);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on any JSON at all (a record the schema would refuse)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue(), (junk, riskJunk) => {
        const r = rate(plan(), { ...junk, risk: riskJunk }, ONE_M);
        expect(r.premium.currency).toBe('USD');
      }),
      { numRuns: 300 },
    );
  });
});
