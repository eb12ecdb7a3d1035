// POST /v1/submissions/validate beside GET /v1/health (issue 29): the dry run does no I/O but one
// cached product lookup, so it should keep at least half of health's throughput. The bench product
// gets requirements first (required taxId and address, a date window), so the rule set does its
// full work: the product's compiled schema, the window, the sandbox syntax.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cannon, interleave, round } from './load.mjs';
import { checks, productHeaders } from './phases.mjs';

const parse = (body) => {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
};
const validOk = (status, body) => status === 200 && parse(body)?.valid === true;

export async function validatePhase(stack, { rounds, seconds, warmS, connections = 50 }) {
  const file = join(stack.tmp, 'requirements.json');
  writeFileSync(file, JSON.stringify({ applicant: { required: ['taxId', 'address'] }, effectiveDate: { minDaysAhead: 1, maxDaysAhead: 365 } }));
  await stack.admin('product', 'requirements', 'set', '--id', stack.productId, file);
  const effectiveDate = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
  const body = JSON.stringify({
    externalRef: 'bench-validate',
    submissionType: 'application',
    effectiveDate,
    productId: stack.productId,
    applicant: {
      legalName: 'Bench Holdings LLC',
      taxId: '12-3456789',
      address: { line1: '1 Main Street', city: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' },
    },
  });
  const health = { method: 'GET', path: '/v1/health', headers: productHeaders(stack) };
  const validate = { method: 'POST', path: '/v1/submissions/validate', headers: { ...productHeaders(stack), 'content-type': 'application/json' }, body };
  const gw = stack.gatewayUrl;
  for (const [request, check] of [
    [health, checks.health],
    [validate, validOk],
  ]) {
    await cannon({ url: gw, request, check, connections: 8, duration: warmS });
  }
  const res = await interleave(
    [
      { name: 'health', url: gw, request: health, check: checks.health },
      { name: 'validate', url: gw, request: validate, check: validOk },
    ],
    { rounds, seconds: seconds / rounds, connections },
  );
  // The phases after this one submit plain bodies: the product accepts them again.
  writeFileSync(file, '{}');
  await stack.admin('product', 'requirements', 'set', '--id', stack.productId, file);
  return { health: res.health, validate: res.validate, ratio: round(res.validate.rps / res.health.rps, 2) };
}
