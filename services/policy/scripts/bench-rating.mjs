#!/usr/bin/env node
// The rating function's cost per call (issue 42 "Measured and reported"): the demo product's plan
// (scripts/demo/product.mjs), parsed as the admin command parses it, rates a spread of submissions
// and options in a loop; prints µs/call (median of 7 rounds). Needs `npm run build` first.
//   node services/policy/scripts/bench-rating.mjs [calls per round, default 20000]
import { performance } from 'node:perf_hooks';
import { NO_REQUIREMENTS } from '@partner/shared/domain/requirements';
import { submissionSchemaFor } from '@partner/shared/domain/submission-rules';
import { parseRatingPlan, rate } from '@partner/shared/domain/rating';
import { DEMO_PRODUCT, DEMO_RATING_PLAN, DEMO_REQUIREMENTS } from '../../../scripts/demo/product.mjs';

const N = Number(process.argv[2] ?? 20_000);
const schema = submissionSchemaFor({ productId: DEMO_PRODUCT.id, requirementsVersion: 2, requirements: { ...NO_REQUIREMENTS, ...DEMO_REQUIREMENTS } });
const parsed = parseRatingPlan(DEMO_RATING_PLAN, schema);
if (!parsed.ok) throw new Error(`the demo plan is refused: ${JSON.stringify(parsed.problems)}`);
const plan = parsed.plan;

const industries = ['retail', 'office', 'restaurant', 'manufacturing', 'construction'];
const regions = ['CA', 'NY', 'TX', 'FL'];
const submissions = Array.from({ length: 64 }, (_, i) => ({
  applicant: { legalName: 'Acme', address: { line1: '1 Main St', city: 'X', region: regions[i % 4], postalCode: '1', country: 'US' } },
  risk: { annualRevenue: 12_345.67 * (i + 1) ** 3, employees: i * 100, industry: industries[i % 5] },
}));
const options = [
  { limit: '1000000', retention: '10000' },
  { limit: '2000000', retention: '0' },
  { limit: '5000000', retention: '25000' },
];

let sink = 0;
const round = () => {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) sink += rate(plan, submissions[i % 64], options[i % 3]).premium.amount.length;
  return ((performance.now() - t0) * 1000) / N;
};
round(); // warm-up
const rounds = Array.from({ length: 7 }, round).sort((a, b) => a - b);
console.log(`rating: ${rounds[3].toFixed(2)} µs/call (median of 7 rounds of ${N}; min ${rounds[0].toFixed(2)}, max ${rounds[6].toFixed(2)})${sink < 0 ? '' : ''}`);
