// Rating (API.md "Quotes, underwriting referrals, bind and issue", "Rating plan"): a product's rating
// plan, how an operator's plan file is checked (every bad part named), and the one pure function
// (plan, submission, option) → premium and the decline/refer reasons that matched. Amounts are decimal
// strings; arithmetic is exact decimal (the Decimal type of the decimal library this package depends on),
// rounded half-up to cents once, at the end. Shared: the policy service checks and stores plans (the
// admin command), the worker rates a quote.create job's options with the plan it read from it.
//
// What a rule or factor reads: the value at a dotted `field` path of the submission record. A factor
// looks the value up as a string (`5` → "5", `true` → "true"); a value that is missing, not a scalar or
// not in its table takes the factor's `default`. A rule compares a present scalar only: a missing
// value (or an object, an array) matches no rule, whatever the op. `eq ne in nin` compare numbers by
// value (5 = 5.0) and other scalars exactly; `gt gte lt lte` compare two numbers by value or two
// strings by code unit order (ISO dates sort so), and any other pair does not match.
import { Decimal as DecimalBase } from 'decimal.js';
import { DomainError, type ErrorDetail } from './errors.js';
import type { QuoteReason } from './quotes.js';

/** A comparison a refer/decline rule applies to the value at `field`. */
export const RULE_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin'] as const;
export type RuleOp = (typeof RULE_OPS)[number];

export interface RatingFactor {
  /** Dotted path into the submission record (`risk.industry`, `applicant.address.region`). */
  field: string;
  /** Value at `field` (as a string) → factor (positive decimal string). */
  values: Record<string, string>;
  /** Factor when the value is missing or not in `values`. */
  default: string;
}

export interface RatingRule {
  field: string;
  op: RuleOp;
  /** A JSON scalar; an array of scalars for `in` / `nin`. */
  value: string | number | boolean | null | (string | number | boolean | null)[];
  code: string;
}

export interface RatingPlan {
  /** ISO 4217 code, e.g. "USD". */
  currency: string;
  /** The exposure base: value(field) ÷ per. */
  exposure: { field: string; per: string };
  /** Rate per `per` units of exposure (non-negative decimal string). */
  rate: string;
  factors: RatingFactor[];
  /** Offered limits and retentions (decimal-string keys, e.g. "1000000") → factor. */
  options: { limit: Record<string, string>; retention: Record<string, string> };
  minimumPremium: string;
  refer: RatingRule[];
  decline: RatingRule[];
  /** An open quote is bindable for this many days. */
  validDays: number;
  /** A referral is due this many hours after it is made. */
  referralHours: number;
}

export interface PlanProblem {
  path: string;
  issue: string;
}

export type ParsedRatingPlan = { ok: true; plan: RatingPlan } | { ok: false; problems: PlanProblem[] };

export interface RatingOption {
  limit: string;
  retention: string;
}

export interface RuleMatch {
  code: string;
  field: string;
}

export interface RatingResult {
  premium: { amount: string; currency: string };
  decline: RuleMatch[];
  refer: RuleMatch[];
}

// Each plan computes with a precision beyond any product of its operands (parsedPlan: the digits of a
// double, of the rate and of the longest value of each factor and option table, added up), so every
// multiplication is exact; the one division (by `per`, to whole cents) is an exact integer division
// with its remainder, rounded half-up once. (A fixed precision large enough for any plan made every
// operation 2x slower.)
const Decimal = DecimalBase.clone({ precision: 4000, rounding: DecimalBase.ROUND_HALF_UP, toExpNeg: -9e15, toExpPos: 9e15 });
type Decimal = InstanceType<typeof Decimal>;
/** Significant digits of a plan's decimal string (an upper bound: every digit counts). */
const digitsOf = (s: string): number => s.replace(/[^0-9]/g, '').length;
/** A double's significant digits, at most (its shortest round-trip form). */
const DOUBLE_DIGITS = 17;

export const MAX_FACTORS = 50;
export const MAX_RULES = 100;
export const MAX_OPTIONS = 100;
export const MAX_VALID_DAYS = 3660;
export const MAX_REFERRAL_HOURS = 8760;

/** A decimal string as plans write factors and rates: up to 15 integer digits and 10 decimals. */
const DECIMAL = /^(0|[1-9][0-9]{0,14})(\.[0-9]{1,10})?$/;
/** An amount of money: up to 15 integer digits and 2 decimals. */
const MONEY = /^(0|[1-9][0-9]{0,14})(\.[0-9]{1,2})?$/;
/** A limit or retention as partners name it: a canonical amount ("1000000", "2500.50"). */
const OPTION_KEY = /^(0|[1-9][0-9]{0,14})(\.[0-9]{0,1}[1-9])?$/;
const CURRENCY = /^[A-Z]{3}$/;
const CODE = /^[a-z][a-z0-9_]{0,63}$/;
const FIELD = /^[A-Za-z_$][A-Za-z0-9_$-]*(\.[A-Za-z_$][A-Za-z0-9_$-]*){0,9}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
type Scalar = string | number | boolean | null;
const isScalar = (v: unknown): v is Scalar =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** The schema of the value at a dotted path, following `properties`; undefined when none produces it. */
function schemaAt(schema: unknown, path: string): { schema: Record<string, unknown>; required: boolean } | undefined {
  let at: unknown = schema;
  let required = true;
  for (const part of path.split('.')) {
    if (!isObject(at) || !isObject(at.properties) || !Object.hasOwn(at.properties, part)) return undefined;
    if (!(Array.isArray(at.required) && at.required.includes(part))) required = false;
    at = at.properties[part];
  }
  return isObject(at) ? { schema: at, required } : at === true ? { schema: {}, required } : undefined;
}

/**
 * Checks an operator's plan against the product's published submissionSchema (a JSON Schema object):
 * every bad part is named (`factors[1].values.retail`), unknown keys refused.
 */
export function parseRatingPlan(input: unknown, submissionSchema: object): ParsedRatingPlan {
  const problems: PlanProblem[] = [];
  const bad = (path: string, issue: string) => void problems.push({ path, issue });
  const unknownKeys = (o: Record<string, unknown>, known: readonly string[], at: string) => {
    for (const k of Object.keys(o)) if (!known.includes(k)) bad(at ? `${at}.${k}` : k, `is not a known part (expected one of: ${known.join(', ')})`);
  };
  if (!isObject(input)) return { ok: false, problems: [{ path: '(document)', issue: 'must be a JSON object' }] };
  const TOP = ['currency', 'exposure', 'rate', 'factors', 'options', 'minimumPremium', 'refer', 'decline', 'validDays', 'referralHours'] as const;
  unknownKeys(input, TOP, '');
  for (const k of TOP) if (input[k] === undefined) bad(k, 'is required');

  const positive = (v: unknown, at: string): string => {
    if (typeof v !== 'string' || !DECIMAL.test(v)) bad(at, 'must be a positive decimal string (e.g. "1.25"; up to 15 digits and 10 decimals)');
    else if (new Decimal(v).isZero()) bad(at, 'must be greater than zero');
    else return v;
    return '1';
  };
  const field = (v: unknown, at: string): string => {
    if (typeof v !== 'string' || !FIELD.test(v)) bad(at, 'must be a dotted path into the submission (e.g. risk.annualRevenue)');
    else if (!schemaAt(submissionSchema, v)) bad(at, `names ${v}, which the product's submissionSchema cannot produce`);
    else return v;
    return '';
  };
  const count = (v: unknown, at: string, max: number): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) bad(at, `must be a whole number from 1 to ${max}`);
    else return v;
    return 1;
  };

  let currency = '';
  if (input.currency !== undefined) {
    if (typeof input.currency !== 'string' || !CURRENCY.test(input.currency)) bad('currency', 'must be an ISO 4217 code (three capital letters, e.g. USD)');
    else currency = input.currency;
  }

  const exposure = { field: '', per: '1' };
  if (input.exposure !== undefined) {
    const e = input.exposure;
    if (!isObject(e)) bad('exposure', 'must be an object {field, per}');
    else {
      unknownKeys(e, ['field', 'per'], 'exposure');
      if (e.field === undefined) bad('exposure.field', 'is required');
      else {
        exposure.field = field(e.field, 'exposure.field');
        const at = exposure.field ? schemaAt(submissionSchema, exposure.field) : undefined;
        // A missing exposure must be the schema's 422, never a premium of nothing.
        if (at && !at.required) bad('exposure.field', `names ${exposure.field}, which the product's submissionSchema does not require`);
        else if (at && at.schema.type !== 'number' && at.schema.type !== 'integer') bad('exposure.field', `names ${exposure.field}, which the product's submissionSchema does not type as a number or integer`);
      }
      if (e.per === undefined) bad('exposure.per', 'is required');
      else exposure.per = positive(e.per, 'exposure.per');
    }
  }

  let rateValue = '1';
  if (input.rate !== undefined) rateValue = positive(input.rate, 'rate');

  const factors: RatingFactor[] = [];
  if (input.factors !== undefined) {
    if (!Array.isArray(input.factors)) bad('factors', 'must be an array of factors');
    else {
      if (input.factors.length > MAX_FACTORS) bad('factors', `may hold at most ${MAX_FACTORS} factors`);
      input.factors.slice(0, MAX_FACTORS).forEach((f, i) => {
        const at = `factors[${i}]`;
        if (!isObject(f)) return bad(at, 'must be an object {field, values, default}');
        unknownKeys(f, ['field', 'values', 'default'], at);
        const out: RatingFactor = { field: '', values: {}, default: '1' };
        if (f.field === undefined) bad(`${at}.field`, 'is required');
        else out.field = field(f.field, `${at}.field`);
        if (f.values === undefined) bad(`${at}.values`, 'is required');
        else if (!isObject(f.values)) bad(`${at}.values`, 'must be an object {<value>: <factor>}');
        else {
          const entries = Object.entries(f.values);
          if (entries.length > 1000) bad(`${at}.values`, 'may hold at most 1000 values');
          for (const [k, v] of entries.slice(0, 1000)) out.values[k] = positive(v, `${at}.values.${k}`);
        }
        if (f.default === undefined) bad(`${at}.default`, 'is required');
        else out.default = positive(f.default, `${at}.default`);
        factors.push(out);
      });
    }
  }

  const options: RatingPlan['options'] = { limit: {}, retention: {} };
  if (input.options !== undefined) {
    const o = input.options;
    if (!isObject(o)) bad('options', 'must be an object {limit, retention}');
    else {
      unknownKeys(o, ['limit', 'retention'], 'options');
      for (const part of ['limit', 'retention'] as const) {
        const table = o[part];
        const at = `options.${part}`;
        if (table === undefined) bad(at, 'is required');
        else if (!isObject(table)) bad(at, `must be an object {<${part}>: <factor>}`);
        else {
          const entries = Object.entries(table);
          if (entries.length === 0) bad(at, `must offer at least one ${part}`);
          if (entries.length > MAX_OPTIONS) bad(at, `may offer at most ${MAX_OPTIONS}`);
          for (const [k, v] of entries.slice(0, MAX_OPTIONS)) {
            if (!OPTION_KEY.test(k)) bad(`${at}.${k}`, `must be named by an amount as partners send it (e.g. "1000000"; no leading or trailing zeros)`);
            else if (part === 'limit' && new Decimal(k).isZero()) bad(`${at}.${k}`, 'must be a limit greater than zero');
            options[part][k] = positive(v, `${at}.${k}`);
          }
        }
      }
    }
  }

  let minimumPremium = '0';
  if (input.minimumPremium !== undefined) {
    if (typeof input.minimumPremium !== 'string' || !MONEY.test(input.minimumPremium)) bad('minimumPremium', 'must be a non-negative amount as a decimal string with at most 2 decimals (e.g. "500.00")');
    else minimumPremium = input.minimumPremium;
  }

  const rules = (key: 'refer' | 'decline'): RatingRule[] => {
    const list = input[key];
    const out: RatingRule[] = [];
    if (list === undefined) return out;
    if (!Array.isArray(list)) return bad(key, 'must be an array of rules {field, op, value, code}'), out;
    if (list.length > MAX_RULES) bad(key, `may hold at most ${MAX_RULES} rules`);
    list.slice(0, MAX_RULES).forEach((r, i) => {
      const at = `${key}[${i}]`;
      if (!isObject(r)) return bad(at, 'must be an object {field, op, value, code}');
      unknownKeys(r, ['field', 'op', 'value', 'code'], at);
      for (const k of ['field', 'op', 'value', 'code']) if (r[k] === undefined) bad(`${at}.${k}`, 'is required');
      const rule: RatingRule = { field: '', op: 'eq', value: null, code: '' };
      if (r.field !== undefined) rule.field = field(r.field, `${at}.field`);
      if (r.op !== undefined) {
        if (typeof r.op !== 'string' || !(RULE_OPS as readonly string[]).includes(r.op)) bad(`${at}.op`, `is not an op (${JSON.stringify(r.op)}; expected one of: ${RULE_OPS.join(', ')})`);
        else rule.op = r.op as RuleOp;
      }
      if (r.value !== undefined && typeof r.op === 'string') {
        const v = r.value;
        if (r.op === 'in' || r.op === 'nin') {
          if (!Array.isArray(v) || v.length === 0 || v.length > 1000 || !v.every(isScalar)) bad(`${at}.value`, `must be a list of 1 to 1000 strings, numbers, booleans or nulls for ${r.op}`);
          else rule.value = [...v];
        } else if (r.op === 'gt' || r.op === 'gte' || r.op === 'lt' || r.op === 'lte') {
          if (!(typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))) bad(`${at}.value`, `must be a number or a string for ${r.op}`);
          else rule.value = v;
        } else if (!isScalar(v)) bad(`${at}.value`, `must be a string, number, boolean or null for ${r.op}`);
        else rule.value = v;
      }
      if (r.code !== undefined) {
        if (typeof r.code !== 'string' || !CODE.test(r.code)) bad(`${at}.code`, 'must be a reason code: a lower-case letter, then lower-case letters, digits and _ (at most 64)');
        else rule.code = r.code;
      }
      out.push(rule);
    });
    return out;
  };
  const refer = rules('refer');
  const decline = rules('decline');

  let validDays = 1;
  if (input.validDays !== undefined) validDays = count(input.validDays, 'validDays', MAX_VALID_DAYS);
  let referralHours = 1;
  if (input.referralHours !== undefined) referralHours = count(input.referralHours, 'referralHours', MAX_REFERRAL_HOURS);

  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, plan: { currency, exposure, rate: rateValue, factors, options, minimumPremium, refer, decline, validDays, referralHours } };
}

/** The parts of `option` the plan does not offer (empty: offered). */
export function optionProblems(plan: RatingPlan, option: RatingOption): ('limit' | 'retention')[] {
  const out: ('limit' | 'retention')[] = [];
  for (const part of ['limit', 'retention'] as const) {
    const key = option[part];
    if (typeof key !== 'string' || !Object.hasOwn(plan.options[part], key)) out.push(part);
  }
  return out;
}

/** The value at a dotted path of a JSON value (own properties only); undefined when absent. */
function valueAt(record: unknown, path: string): unknown {
  let at: unknown = record;
  for (const part of path.split('.')) {
    if (!isObject(at) || !Object.hasOwn(at, part)) return undefined;
    at = at[part];
  }
  return at;
}

/** A factor table's key for a value: scalars as JSON shows them, other values none. */
function tableKey(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean' || v === null) return String(v);
  return undefined;
}

// Comparing two JSON numbers needs no arithmetic: each is exactly the double its text names, and two
// doubles compare (and equal) exactly, so 5 and 5.0 are equal and no rounding is involved.
const same = (a: Scalar, b: Scalar): boolean => a === b;

/** -1, 0, 1, or undefined when the two cannot be ordered (not two numbers, not two strings). */
function order(a: Scalar, b: unknown): number | undefined {
  if ((typeof a === 'number' && typeof b === 'number' && Number.isFinite(b)) || (typeof a === 'string' && typeof b === 'string')) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  return undefined;
}

/** Whether a rule matches the value at its field. */
export function ruleMatches(rule: RatingRule, value: unknown): boolean {
  if (!isScalar(value)) return false;
  const v = rule.value;
  switch (rule.op) {
    case 'eq':
      return isScalar(v) && same(value, v);
    case 'ne':
      return isScalar(v) && !same(value, v);
    case 'in':
      return Array.isArray(v) && v.some((x) => same(value, x));
    case 'nin':
      return Array.isArray(v) && !v.some((x) => same(value, x));
    default: {
      const c = order(value, v);
      if (c === undefined) return false;
      return rule.op === 'gt' ? c > 0 : rule.op === 'gte' ? c >= 0 : rule.op === 'lt' ? c < 0 : c <= 0;
    }
  }
}

const matching = (rules: readonly RatingRule[], submission: unknown): RuleMatch[] =>
  rules.filter((r) => ruleMatches(r, valueAt(submission, r.field))).map((r) => ({ code: r.code, field: r.field }));

/**
 * Rates one option of a submission (the submission record as JSON). Pure; never throws for a submission
 * the product's schema accepts and an offered option. Every matching decline and refer rule is listed.
 */
/** A plan's decimal strings parsed once (plans are immutable once parsed; a quote job rates several options). */
interface Parsed {
  /** The Decimal of this plan's precision. */
  K: typeof Decimal;
  one: Decimal;
  rate: Decimal;
  per: Decimal;
  minimum: Decimal;
  /** minimumPremium × per: a product at or below it rates as the minimum. */
  floor: Decimal;
  factors: { field: string; values: Map<string, Decimal>; default: Decimal }[];
  limit: Map<string, Decimal>;
  retention: Map<string, Decimal>;
}
const parsedPlans = new WeakMap<RatingPlan, Parsed>();
function parsedPlan(plan: RatingPlan): Parsed {
  let p = parsedPlans.get(plan);
  if (!p) {
    const longest = (table: Record<string, string>, also = '1') => Math.max(digitsOf(also), ...Object.values(table).map(digitsOf));
    // The product's digits are at most the sum of its operands' (exposure, rate, one value per factor,
    // the two option factors), times 100 and 2 for the rounding step, with room to spare.
    const precision =
      DOUBLE_DIGITS + digitsOf(plan.rate) + plan.factors.reduce((n, f) => n + longest(f.values, f.default), 0) +
      longest(plan.options.limit) + longest(plan.options.retention) + digitsOf(plan.minimumPremium) + digitsOf(plan.exposure.per) + 20;
    const K = Decimal.clone({ precision });
    const decimals = (table: Record<string, string>) => new Map(Object.entries(table).map(([k, v]) => [k, new K(v)]));
    const minimum = new K(plan.minimumPremium);
    const per = new K(plan.exposure.per);
    p = {
      K,
      rate: new K(plan.rate),
      per,
      minimum,
      floor: minimum.times(per),
      factors: plan.factors.map((f) => ({ field: f.field, values: decimals(f.values), default: new K(f.default) })),
      limit: decimals(plan.options.limit),
      retention: decimals(plan.options.retention),
      one: new K(1),
    };
    parsedPlans.set(plan, p);
  }
  return p;
}

export function rate(plan: RatingPlan, submission: Record<string, unknown>, option: RatingOption): RatingResult {
  const p = parsedPlan(plan);
  const raw = valueAt(submission, plan.exposure.field);
  // The schema requires a number there (parseRatingPlan saw to it); anything else rates as zero.
  const exposure = new p.K(typeof raw === 'number' && Number.isFinite(raw) ? raw : 0);
  let product: Decimal = exposure.times(p.rate);
  for (const f of p.factors) {
    const key = tableKey(valueAt(submission, f.field));
    product = product.times((key !== undefined && f.values.get(key)) || f.default);
  }
  product = product.times(p.limit.get(option.limit) ?? p.one).times(p.retention.get(option.retention) ?? p.one);
  // value ÷ per in cents, rounded half-up exactly: whole cents q = ⌊100·product ÷ per⌋, remainder r;
  // one more cent when 2r ≥ per. No division is ever rounded before that.
  const { minimum, per } = p;
  let premium = minimum;
  if (product.gt(p.floor)) {
    const hundredfold = product.times(100);
    let cents = hundredfold.dividedToIntegerBy(per);
    if (hundredfold.minus(cents.times(per)).times(2).gte(per)) cents = cents.plus(1);
    premium = Decimal.max(minimum, cents.dividedBy(100));
  }
  return {
    premium: { amount: premium.toFixed(2), currency: plan.currency },
    decline: matching(plan.decline, submission),
    refer: matching(plan.refer, submission),
  };
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** A product's current rating plan and its version, as the policy service stores it. */
export interface CurrentRatingPlan {
  plan: RatingPlan;
  ratingVersion: number;
}

/** One rated option of a quote request, as a quote.create job stores it (an open one with its offer). */
export interface RatedQuote {
  quoteId: string;
  option: { limit: string; retention: string };
  status: 'open' | 'referred' | 'declined';
  premium: { amount: string; currency: string } | null;
  validUntil: string | null;
  referral: { reasons: QuoteReason[]; dueBy: string } | null;
  decline: { reasons: QuoteReason[] } | null;
  offer?: { jws: string; sha256: string } | null;
}

/** The refusal of a quote request for a product without a rating plan. */
export const productNotRated = (productId: string): DomainError =>
  new DomainError('product_not_rated', `product ${productId} has no rating plan, so it cannot be quoted`);

/**
 * A quote request's options rated with a product's current plan at `now` (the wall clock, or the
 * submission's test clock): each with a fresh quote id, declined (every decline rule that matched),
 * referred (every refer rule, dueBy = now + referralHours) or open (validUntil = now + validDays).
 * Throws option_not_offered, naming every part of every option the plan does not offer, before
 * rating any. Pure but for `newId`: the worker runs it (quote.create), the policy service too (RateQuotes).
 */
export function rateOptions(
  current: CurrentRatingPlan,
  submission: Record<string, unknown>,
  options: readonly RatingOption[],
  now: Date,
  newId: () => string,
): RatedQuote[] {
  const { plan, ratingVersion } = current;
  const details: ErrorDetail[] = [];
  options.forEach((o, i) => {
    for (const part of optionProblems(plan, { limit: o.limit, retention: o.retention })) {
      details.push({ field: `options[${i}].${part}`, issue: `is not offered by the product's rating plan (version ${ratingVersion})` });
    }
  });
  if (details.length > 0) {
    throw new DomainError('option_not_offered', `the product's rating plan does not offer ${details.map((x) => x.field).join(', ')}`, { details });
  }
  return options.map((o) => {
    const option = { limit: o.limit, retention: o.retention };
    const r = rate(plan, submission, option);
    const quoteId = newId();
    if (r.decline.length > 0) {
      return { quoteId, option, status: 'declined', premium: null, validUntil: null, referral: null, decline: { reasons: r.decline } };
    }
    if (r.refer.length > 0) {
      const dueBy = new Date(now.getTime() + plan.referralHours * HOUR_MS).toISOString();
      return { quoteId, option, status: 'referred', premium: r.premium, validUntil: null, referral: { reasons: r.refer, dueBy }, decline: null };
    }
    const validUntil = new Date(now.getTime() + plan.validDays * DAY_MS).toISOString();
    return { quoteId, option, status: 'open', premium: r.premium, validUntil, referral: null, decline: null };
  });
}
