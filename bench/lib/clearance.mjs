// Clearance (issue 30): what deciding a risk at intake costs. Submit + wait with a `taxId` on every
// submission (two risk locks and the FEIN probes) against the same run without one (the name's lock
// and probes only), in the same run and in alternating blocks/slices so a shared machine's noise falls
// on both alike. Every submission is a risk of its own (a fresh name, and a fresh FEIN when it has one):
// what a carrier's intake mostly sees.
import { randomUUID } from 'node:crypto';
import { cannon, interleave, round } from './load.mjs';
import { checks, productHeaders } from './phases.mjs';

let n = 0;
/** A fresh 9-digit FEIN. */
const taxId = () => String(100_000_000 + ((Date.now() * 7 + ++n * 7919) % 899_999_999)).slice(0, 9);

function submit(stack, withTaxId) {
  return {
    method: 'POST',
    path: '/v1/submissions',
    headers: { ...productHeaders(stack), 'content-type': 'application/json', prefer: 'wait=15' },
    setup: () => {
      const applicant = { legalName: `Bench Risk ${randomUUID()} LLC`, ...(withTaxId ? { taxId: taxId() } : {}) };
      return {
        headers: { 'idempotency-key': randomUUID() },
        body: JSON.stringify({ externalRef: 'bench-clearance', submissionType: 'application', effectiveDate: '2027-01-01', productId: stack.productId, applicant }),
      };
    },
  };
}

const cleared = (status, body) => checks.submitted(status, body) && JSON.parse(body).clearance?.status === 'cleared';

/** Sequential p50 (alternating blocks of `block`) and 64-connection throughput (alternating slices), with and without a taxId. */
export async function clearanceCost(stack, { total, block, rounds, seconds, warmS }) {
  for (const withTaxId of [true, false]) await cannon({ url: stack.gatewayUrl, request: submit(stack, withTaxId), check: cleared, connections: 8, duration: warmS });
  const lat = { withTaxId: [], without: [] };
  const errors = { withTaxId: 0, without: 0 };
  for (let done = 0; done < total; done += block) {
    for (const which of ['withTaxId', 'without']) {
      const r = await cannon({ url: stack.gatewayUrl, request: submit(stack, which === 'withTaxId'), check: cleared, connections: 1, amount: Math.min(block, total - done), keepLatencies: true });
      lat[which].push(...r.rawLatencies);
      errors[which] += r.errors;
    }
  }
  const p50 = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
  };
  const c64 = await interleave(
    [
      { name: 'withTaxId', url: stack.gatewayUrl, request: submit(stack, true), check: cleared },
      { name: 'without', url: stack.gatewayUrl, request: submit(stack, false), check: cleared },
    ],
    { rounds, seconds, connections: 64 },
  );
  const seq = { withTaxId: { p50: p50(lat.withTaxId), n: lat.withTaxId.length, errors: errors.withTaxId }, without: { p50: p50(lat.without), n: lat.without.length, errors: errors.without } };
  return {
    sequential: { ...seq, p50Ratio: seq.without.p50 ? round(seq.withTaxId.p50 / seq.without.p50, 3) : null },
    c64: { withTaxId: c64.withTaxId, without: c64.without, rpsRatio: c64.without.rps ? round(c64.withTaxId.rps / c64.without.rps, 3) : null },
  };
}
