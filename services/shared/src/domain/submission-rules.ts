// The one rule set that judges a submission's create body (API.md "Products and their requirements").
// The gateway's 400 check of POST /v1/submissions uses the generic schema below; the JSON Schema a
// partner downloads (GET /v1/products/{id}/requirements) is generated from it plus the product's
// required applicant fields; and checkSubmission — used by POST /v1/submissions/validate and by the
// create job alike — compiles that very document with Ajv 2020 and adds what no schema can say
// (the product exists and is active, the effective-date window counted from today in UTC, sandbox
// directive syntax). So a partner's validator, validate and the job cannot disagree.
import { wallClock, type Clock } from './clock.js';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { COUNTRY_CODES, TAX_ID_PATTERN } from './applicant.js';
import type { Requirements } from './requirements.js';
import { sandboxIssue } from './sandbox.js';

/** A name must show something: at least one letter, digit, punctuation mark or symbol. */
export const VISIBLE_TEXT = '[\\p{L}\\p{N}\\p{P}\\p{S}]';

// Every string of the body is also free of control characters (C0, DEL) and lone surrogates: the
// gateway's body scan refuses them in any string, so the published schema says so too (a body a
// standard validator accepts is one the server accepts).
//
// Both patterns run in time linear in the string's length, whatever it holds (a partner's validate
// runs them on strings of up to the body limit, after maxLength has already failed): the
// usable-characters check is one lookahead, which the engine does not re-enter, and the visible
// character is then found by a class that excludes it, so no position is tried twice. The obvious
// `^U*VU*$` backtracks quadratically on a long string that ends in a control character.
// test/regex-safety.test.ts checks every pattern on a request path with recheck.
const USABLE = '[^\\u0000-\\u001f\\u007f\\p{Cs}]';
/** A string of usable characters only. */
export const USABLE_TEXT = `^${USABLE}*$`;
/** Usable characters with at least one visible one (a name, an address line). */
export const VISIBLE_USABLE_TEXT = `^(?=${USABLE}*$)[^\\p{L}\\p{N}\\p{P}\\p{S}]*${VISIBLE_TEXT}`;

const text = { type: 'string', minLength: 1, maxLength: 200, pattern: VISIBLE_USABLE_TEXT } as const;

/** The generic create body (every product): the gateway's 400 validation of POST /v1/submissions. */
export const submissionCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['externalRef', 'submissionType', 'effectiveDate', 'productId', 'applicant'],
  properties: {
    externalRef: { type: 'string', minLength: 1, maxLength: 200, pattern: USABLE_TEXT },
    submissionType: { type: 'string', enum: ['application'] },
    effectiveDate: { type: 'string', format: 'date' },
    productId: { type: 'string', format: 'uuid' },
    // UAT only (API.md "Test clocks"): the partner's test clock the submission lives on; production refuses it (400 naming it).
    testClockId: { type: 'string', pattern: '^clk_[0-9a-z]{24}$', description: 'UAT only: the partner\'s test clock the submission lives on (production: 400 naming it).' },
    applicant: {
      type: 'object',
      additionalProperties: false,
      required: ['legalName'],
      properties: {
        legalName: text,
        taxId: { type: 'string', pattern: TAX_ID_PATTERN },
        address: {
          type: 'object',
          additionalProperties: false,
          required: ['line1', 'city', 'region', 'postalCode', 'country'],
          properties: {
            line1: text,
            line2: text,
            city: text,
            region: text,
            postalCode: text,
            country: { type: 'string', description: 'an ISO 3166-1 alpha-2 country code (e.g. US)', enum: COUNTRY_CODES },
          },
        },
      },
    },
    risk: { type: 'object', description: 'Product-defined risk data; a product with a risk schema requires it (see its submissionSchema).' },
  },
} as const;

/**
 * A real calendar date, years 0001–9999 (what `format: date` means to the gateway: shared/domain/time.ts
 * isCalendarDate), as a pattern, so the published schema needs no format plugin.
 */
export const CALENDAR_DATE_PATTERN =
  '^(?!0000)(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))' +
  '|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)$';
/** What ajv-formats' `uuid` accepts (the gateway's format), as a pattern. */
export const UUID_PATTERN = '^(?:urn:uuid:)?[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$';
const FORMAT_PATTERNS: Record<string, string> = { date: CALENDAR_DATE_PATTERN, uuid: UUID_PATTERN };

/** Copies a schema with each `format` replaced by the equivalent `pattern`. */
function withoutFormats(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(withoutFormats);
  if (typeof s !== 'object' || s === null) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'format' && typeof v === 'string' && FORMAT_PATTERNS[v]) out.pattern = FORMAT_PATTERNS[v];
    else if (k === 'enum' || k === 'required') out[k] = Array.isArray(v) ? [...(v as unknown[])] : v;
    else out[k] = withoutFormats(v);
  }
  return out;
}

/** The product part of the rules: which product, its requirements and their version. */
export interface ProductRules {
  productId: string;
  active: boolean;
  requirementsVersion: number;
  requirements: Requirements;
}

/**
 * The create body for one product as a JSON Schema 2020-12 document: the generic rules plus the
 * product's required applicant fields and its risk schema, if any (`submissionSchema` of
 * GET /v1/products/{id}/requirements).
 */
export function submissionSchemaFor(product: Pick<ProductRules, 'productId' | 'requirementsVersion' | 'requirements'>): Record<string, unknown> {
  const schema = withoutFormats(submissionCreateSchema) as Record<string, unknown> & { properties: Record<string, Record<string, unknown>> };
  const applicant = schema.properties.applicant as { required: string[] };
  applicant.required = [...applicant.required, ...product.requirements.applicant.required];
  // A product's risk schema (API.md "Risk data"): `risk` becomes required and is judged by it.
  if (product.requirements.risk) {
    schema.properties.risk = structuredClone(product.requirements.risk);
    (schema as unknown as { required: string[] }).required = [...(schema as unknown as { required: string[] }).required, 'risk'];
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `urn:partner-submission:product:${product.productId}:requirements:${product.requirementsVersion}:submission`,
    title: `Submission create body for product ${product.productId} (requirements version ${product.requirementsVersion})`,
    description:
      'Generated from the rules the server applies. A body this schema accepts passes the schema and field checks for this product; ' +
      'the effective-date window (counted in UTC from the day the job runs) and the product being active are checked by the server only.',
    ...schema,
  };
}

/**
 * At most this many problems in validate's answer; with more, `errorsTruncated: true` says so. A body
 * with 3,000 unknown keys was a 221 KB answer.
 */
export const MAX_VALIDATION_ERRORS = 100;

/** Codes found beyond the schema (checkSubmission adds them after it): kept first when a list is cut. */
const BEYOND_SCHEMA: ReadonlySet<RuleError['code']> = new Set(['unknown_product', 'out_of_window', 'invalid_sandbox_directive']);

/**
 * At most `max` of a checkSubmission list: the problems beyond the schema (the product, the date
 * window, sandbox syntax) first, then the schema's in their order, so cutting a long list of unknown
 * keys never hides them; `truncated` when some were left out.
 */
export function firstProblems(errors: readonly RuleError[], max = MAX_VALIDATION_ERRORS): { errors: RuleError[]; truncated: boolean } {
  if (errors.length <= max) return { errors: [...errors], truncated: false };
  const beyond = errors.filter((e) => BEYOND_SCHEMA.has(e.code));
  return { errors: [...beyond, ...errors.filter((e) => !BEYOND_SCHEMA.has(e.code))].slice(0, max), truncated: true };
}

/** One problem of a body: the field (dotted path), a code and a sentence. */
export interface RuleError {
  field: string;
  code: 'required' | 'unknown_field' | 'invalid' | 'out_of_window' | 'unknown_product' | 'invalid_sandbox_directive';
  message: string;
}

/** What each pattern of the create schema asks, in words: the gateway's 400 details and validate's errors say the same. */
export const PATTERN_ISSUES: Readonly<Record<string, string>> = {
  [VISIBLE_USABLE_TEXT]: 'must contain a visible character (not only spaces or invisible characters) and no control characters',
  [USABLE_TEXT]: 'must not contain control characters (U+0000–U+001F, U+007F) or lone surrogates',
  [TAX_ID_PATTERN]: 'must be a US FEIN: NN-NNNNNNN or 9 digits',
  [CALENDAR_DATE_PATTERN]: 'must be a valid date (YYYY-MM-DD)',
  [UUID_PATTERN]: 'must be a valid uuid',
};

/** Ajv's errors as fields, named as the gateway names them (`applicant.address.city`). */
export function ruleErrors(errors: readonly ErrorObject[]): RuleError[] {
  return errors.map((e) => {
    const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const join = (name: string) => (base ? `${base}.${name}` : name);
    switch (e.keyword) {
      case 'required':
        return { field: join((e.params as { missingProperty: string }).missingProperty), code: 'required', message: 'is required' };
      case 'additionalProperties':
        return { field: join((e.params as { additionalProperty: string }).additionalProperty), code: 'unknown_field', message: 'is not a known field' };
      case 'pattern':
        return { field: base || '(body)', code: 'invalid', message: PATTERN_ISSUES[(e.params as { pattern: string }).pattern] ?? e.message ?? 'is invalid' };
      case 'enum': {
        const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
        return { field: base || '(body)', code: 'invalid', message: allowed.length > 12 ? 'must be an ISO 3166-1 alpha-2 country code (e.g. US)' : `must be one of: ${allowed.join(', ')}` };
      }
      default:
        return { field: base || '(body)', code: 'invalid', message: e.message ?? 'is invalid' };
    }
  });
}

/** Ajv 2020 in strict mode, as a partner would run it. */
export function newSchemaValidator(): Ajv2020 {
  return new Ajv2020({ allErrors: true, strict: true });
}

const ajv = newSchemaValidator();
/** Compiled per (product, version); a few hundred products at most. */
const compiled = new Map<string, ValidateFunction>();
function compiledFor(product: ProductRules): ValidateFunction {
  const key = `${product.productId}@${product.requirementsVersion}`;
  let v = compiled.get(key);
  if (!v) {
    // Without its $id: a version evicted and compiled again must not clash with its first copy.
    const { $id: _id, ...schema } = submissionSchemaFor(product);
    v = ajv.compile(schema);
    if (compiled.size >= 1000) compiled.delete(compiled.keys().next().value as string);
    compiled.set(key, v);
  }
  return v;
}
/** The generic rules alone (no product known). */
const generic = ajv.compile(withoutFormats(submissionCreateSchema) as object);

/**
 * True when the body passes the generic schema (every product's rules), as every create job's
 * payload has at the gateway. A payload that does not (one submitted to the job service directly)
 * is not judged by a product's requirements: it fails as it would without them.
 */
export const passesGenericRules = (body: unknown): boolean => generic(body) === true;

/** Whole days from `today` (YYYY-MM-DD, UTC) to `date` (YYYY-MM-DD). */
export function daysAhead(date: string, today: string): number {
  const at = (d: string) => {
    const [y, m, day] = d.split('-').map(Number) as [number, number, number];
    const t = new Date(Date.UTC(2000, m - 1, day));
    t.setUTCFullYear(y);
    return t.getTime();
  };
  return Math.round((at(date) - at(today)) / 86_400_000);
}

/** Today's date in UTC, YYYY-MM-DD. */
export const utcToday = (clock: Clock = wallClock): string => clock.now().toISOString().slice(0, 10);

/**
 * Every rule the create job applies, in one place (validate and the job both call it): the
 * product's schema, the product exists and is active, the effective-date window counted from
 * `today` (UTC), and — where sandbox directives are honoured — their syntax. `product` is undefined
 * for an unknown product. Returns every problem found ([] = the create would succeed).
 */
export function checkSubmission(body: unknown, product: ProductRules | undefined, opts: { today: string; sandbox: boolean }): RuleError[] {
  const known = product?.active ? product : undefined;
  const validate = known ? compiledFor(known) : generic;
  const errors: RuleError[] = validate(body) ? [] : ruleErrors(validate.errors ?? []);
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (!known && !errors.some((e) => e.field === 'productId')) {
    errors.push({ field: 'productId', code: 'unknown_product', message: 'names no product that is offered (unknown or inactive)' });
  }
  const window = known?.requirements.effectiveDate;
  if (window && typeof b.effectiveDate === 'string' && !errors.some((e) => e.field === 'effectiveDate')) {
    const days = daysAhead(b.effectiveDate, opts.today);
    const { minDaysAhead: min, maxDaysAhead: max } = window;
    if ((min !== null && days < min) || (max !== null && days > max)) {
      const bounds = min !== null && max !== null ? `${min} to ${max} days` : min !== null ? `at least ${min} days` : `at most ${max} days`;
      errors.push({ field: 'effectiveDate', code: 'out_of_window', message: `must be ${bounds} after today (${opts.today}, UTC); it is ${days} days` });
    }
  }
  const sandbox = opts.sandbox && typeof b.externalRef === 'string' ? sandboxIssue(b.externalRef) : undefined;
  if (sandbox && !errors.some((e) => e.field === 'externalRef')) {
    errors.push({ field: 'externalRef', code: 'invalid_sandbox_directive', message: sandbox });
  }
  return errors;
}
