#!/usr/bin/env node
// The demo product `npm start` seeds, and what it requires, so the README's walkthrough shows the
// lifecycle by itself (issue 49, 1): a create leaves `attachments.loss_run` in `currentlyDue`, the
// upload of a loss run (a PDF, at most 10 MiB, at most 5 of them) empties it. The same rule the
// OpenAPI document's and the Postman collection's examples show. test/docs.test.ts seeds its stack
// from here too.
//
// Its requirements also carry a risk schema (API.md "Risk data": every create body then has `risk`
// with these fields), and the product has a rating plan (API.md "Rating plan", issue 42), set at seed,
// so the walkthrough can quote.
//
//   node scripts/demo/product.mjs              prints the requirements file for `npm run admin -- product requirements set`
//   node scripts/demo/product.mjs rating       prints the rating plan file for `npm run admin -- product rating set`
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const DEMO_PRODUCT = { id: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b', name: 'Demo General Liability' };

/** The demo product's requirements file (the admin CLI's format, services/shared/src/domain/requirements.ts). */
export const DEMO_REQUIREMENTS = {
  attachments: [{ documentType: 'loss_run', min: 1, max: 5, mediaTypes: ['application/pdf'], maxBytes: 10 * 1024 * 1024 }],
  risk: {
    type: 'object',
    additionalProperties: false,
    required: ['annualRevenue', 'employees', 'industry'],
    properties: {
      annualRevenue: { type: 'number', minimum: 0, maximum: 100000000000, description: 'Annual revenue in USD' },
      employees: { type: 'integer', minimum: 0, maximum: 1000000 },
      industry: { type: 'string', enum: ['retail', 'office', 'restaurant', 'manufacturing', 'construction'] },
    },
  },
};

/** A risk that the demo's rating plan quotes `open` (no rule matches): the README's create body. */
export const DEMO_RISK = { annualRevenue: 2500000, employees: 12, industry: 'retail' };

/**
 * The demo product's rating plan: revenue per 1,000 × 1.25, by industry and region, three limits and
 * three retentions; construction and revenue over 50 million go to an underwriter, more than 5,000
 * employees is declined.
 */
export const DEMO_RATING_PLAN = {
  currency: 'USD',
  exposure: { field: 'risk.annualRevenue', per: '1000' },
  rate: '1.25',
  factors: [
    { field: 'risk.industry', values: { retail: '1', office: '0.85', restaurant: '1.2', manufacturing: '1.4' }, default: '1.6' },
    { field: 'applicant.address.region', values: { CA: '1.1', NY: '1.15', FL: '1.2' }, default: '1' },
  ],
  options: {
    limit: { 1000000: '1', 2000000: '1.6', 5000000: '2.5' },
    retention: { 0: '1.1', 10000: '1', 25000: '0.9' },
  },
  minimumPremium: '500.00',
  refer: [
    { field: 'risk.annualRevenue', op: 'gt', value: 50000000, code: 'revenue_above_authority' },
    { field: 'risk.industry', op: 'eq', value: 'construction', code: 'construction_review' },
  ],
  decline: [{ field: 'risk.employees', op: 'gt', value: 5000, code: 'too_many_employees' }],
  validDays: 30,
  referralHours: 24,
};

/**
 * True when a product's requirements, as `GET /v1/products/{id}/requirements` shows them, ask for
 * nothing: a product just added, or the demo product of a database seeded before it had requirements.
 * `npm start` sets the demo's then, and leaves any other alone (an operator's change stands, and a
 * second start bumps no version).
 */
export function requiresNothing(requirements) {
  return (
    (requirements.applicant?.required ?? []).length === 0 &&
    (requirements.effectiveDate ?? null) === null &&
    (requirements.attachments ?? []).length === 0 &&
    !(requirements.submissionSchema?.required ?? []).includes('risk')
  );
}

/**
 * True when they are exactly what the demo required before it had risk data (the loss run alone): a
 * database seeded then. `npm start` sets the current ones then, so the walkthrough can quote; an
 * operator's own change still stands.
 */
export function isDemoBeforeRisk(requirements) {
  return (
    (requirements.applicant?.required ?? []).length === 0 &&
    (requirements.effectiveDate ?? null) === null &&
    JSON.stringify(requirements.attachments ?? []) === JSON.stringify(DEMO_REQUIREMENTS.attachments) &&
    !(requirements.submissionSchema?.required ?? []).includes('risk')
  );
}

/**
 * Adds a product a submission can be quoted for at once: the demo's risk schema (nothing else due)
 * and its rating plan, through the admin command that `admin(...args)` runs. Returns its id. The
 * bench's quote and bind phases and the tests that quote use it.
 */
export async function addQuotableProduct(admin, name, id = randomUUID()) {
  const dir = mkdtempSync(join(tmpdir(), 'quotable-product-'));
  try {
    writeFileSync(join(dir, 'requirements.json'), JSON.stringify({ risk: DEMO_REQUIREMENTS.risk }));
    writeFileSync(join(dir, 'rating.json'), JSON.stringify(DEMO_RATING_PLAN));
    await admin('product', 'add', '--id', id, '--name', name);
    await admin('product', 'requirements', 'set', '--id', id, join(dir, 'requirements.json'));
    await admin('product', 'rating', 'set', '--id', id, join(dir, 'rating.json'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return id;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${JSON.stringify(process.argv[2] === 'rating' ? DEMO_RATING_PLAN : DEMO_REQUIREMENTS, null, 2)}\n`);
}
