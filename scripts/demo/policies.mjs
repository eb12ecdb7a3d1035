#!/usr/bin/env node
// Demo policies for `npm start`, dated relative to today so an `active` policy is in force now (its
// expirationDate in the future), a `pending` one starts later and `expired`/`cancelled` ones lie in
// the past. `node scripts/demo/policies.mjs [YYYY-MM-DD]` prints them as JSON Lines for
// `npm run admin -- policy import`.
import { pathToFileURL } from 'node:url';

const PRODUCT = '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b';

// [number, status, insured, months from today's month to the effective date, premium, currency]
const POLICIES = [
  ['0001', 'active', 'Acme Widgets Ltd', -10, '1250.00', 'EUR'],
  ['0002', 'active', 'Northwind Traders GmbH', -8, '980.40', 'EUR'],
  ['0003', 'pending', 'Contoso Bakery', 2, '415.75', 'EUR'],
  ['0004', 'cancelled', 'Fabrikam Logistics BV', -17, '3120.00', 'EUR'],
  ['0005', 'expired', 'Tailspin Toys SARL', -30, '760.00', 'EUR'],
  ['0006', 'active', 'Woodgrove Dental Practice', -3, '1999.99', 'GBP'],
];

/** First day of the month `months` away from `today`'s month, as YYYY-MM-DD (UTC). */
function monthStart(today, months) {
  const d = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + months, 1));
  return d.toISOString().slice(0, 10);
}

/** The demo policies as import records; each runs a year from its effective date. */
export function demoPolicies(today = new Date()) {
  return POLICIES.map(([n, status, legalName, offset, amount, currency]) => ({
    policyNumber: `DEMO-POL-${n}`,
    status,
    productId: PRODUCT,
    insured: { legalName },
    effectiveDate: monthStart(today, offset),
    expirationDate: monthStart(today, offset + 12),
    premium: { amount, currency },
  }));
}

export const toJsonl = (policies) => policies.map((p) => JSON.stringify(p)).join('\n') + '\n';

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const today = process.argv[2] ? new Date(`${process.argv[2]}T00:00:00Z`) : new Date();
  if (Number.isNaN(today.getTime())) {
    process.stderr.write('usage: node scripts/demo/policies.mjs [YYYY-MM-DD]\n');
    process.exit(2);
  }
  process.stdout.write(toJsonl(demoPolicies(today)));
}
