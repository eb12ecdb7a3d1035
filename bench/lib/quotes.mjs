// Quotes (issue 42): what a quote request costs beside the submit it follows. One loop, sequential:
// create a submission (submit + Prefer: wait, timed: the baseline), then request one option's quote
// for it (quote + Prefer: wait, timed: the product), so both figures come from the same run, the
// same connections and the same moments of a shared machine. A product of its own: a risk schema with
// nothing due, and the demo rating plan, so every quote is rated, signed and stored `open`.
import { randomUUID } from 'node:crypto';
import { round } from './load.mjs';
import { productHeaders } from './phases.mjs';
import { addQuotableProduct, DEMO_RISK } from '../../scripts/demo/product.mjs';

const p50 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? round(s[Math.floor((s.length - 1) / 2)], 2) : null;
};
const p99 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? round(s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)], 2) : null;
};

/** Adds the bench's quote product (risk schema, demo rating plan); returns its id. */
export async function quoteProduct(stack) {
  return addQuotableProduct((...args) => stack.admin(...args), 'Bench quotes product');
}

async function timed(url, init) {
  const t0 = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  return { ms: performance.now() - t0, status: res.status, text };
}

/** `total` rounds of submit+wait then quote+wait (one option), after `warm` unmeasured rounds. */
export async function quoteCost(stack, { total, warm }) {
  const productId = await quoteProduct(stack);
  const headers = { ...productHeaders(stack), 'content-type': 'application/json', prefer: 'wait=15' };
  const submit = [];
  const quote = [];
  let errors = 0;
  for (let i = 0; i < warm + total; i++) {
    const s = await timed(`${stack.gatewayUrl}/v1/submissions`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body: JSON.stringify({ externalRef: 'bench-quote', submissionType: 'application', effectiveDate: '2027-01-01', productId, applicant: { legalName: `Bench Quote ${randomUUID()} LLC` }, risk: DEMO_RISK }),
    });
    if (s.status !== 200) {
      errors++;
      continue;
    }
    const { submissionId } = JSON.parse(s.text);
    const q = await timed(`${stack.gatewayUrl}/v1/submissions/${submissionId}/quotes`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body: JSON.stringify({ options: [{ limit: '1000000', retention: '10000' }] }),
    });
    const open = q.status === 200 && JSON.parse(q.text).quotes?.[0]?.status === 'open';
    if (!open) errors++;
    if (i < warm || !open) continue;
    submit.push(s.ms);
    quote.push(q.ms);
  }
  const result = {
    submit: { p50: p50(submit), p99: p99(submit), n: submit.length },
    quote: { p50: p50(quote), p99: p99(quote), n: quote.length },
    errors,
  };
  return { ...result, p50Ratio: result.submit.p50 ? round(result.quote.p50 / result.submit.p50, 3) : null };
}
