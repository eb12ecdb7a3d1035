// Rating (API.md "Quotes, underwriting referrals, bind and issue", "Rating plan"): a product's rating
// plan, how an operator's plan file is checked (every bad part named), and the one pure function
// (plan, submission, option) → premium and the decline/refer reasons that matched. Amounts are decimal
// strings; arithmetic is exact decimal, rounded half-up to cents once, at the end.

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

/**
 * Checks an operator's plan against the product's published submissionSchema (a JSON Schema object):
 * every bad part is named (`factors[1].values.retail`), unknown keys refused.
 */
export function parseRatingPlan(input: unknown, submissionSchema: object): ParsedRatingPlan {
  void input;
  void submissionSchema;
  throw new Error('not implemented');
}

/** The parts of `option` the plan does not offer (empty: offered). */
export function optionProblems(plan: RatingPlan, option: RatingOption): ('limit' | 'retention')[] {
  void plan;
  void option;
  throw new Error('not implemented');
}

/**
 * Rates one option of a submission (the submission record as JSON). Pure; never throws for a submission
 * the product's schema accepts and an offered option. Every matching decline and refer rule is listed.
 */
export function rate(plan: RatingPlan, submission: Record<string, unknown>, option: RatingOption): RatingResult {
  void plan;
  void submission;
  void option;
  throw new Error('not implemented');
}
