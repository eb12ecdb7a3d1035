// Bind + wait (issue 43): POST /v1/quotes/{id}/bind with Prefer: wait, sequential, against submit +
// wait in the same run and in alternating blocks (a shared machine's noise falls on both alike). Each
// bind is of a fresh submission's fresh open quote (created untimed before it, of a product of its own with
// the demo rating plan), so every timed bind issues a policy and its declarations PDF. The PDF's share:
// the mean time to render one declarations PDF (the policy service's own renderer, in this process)
// over the bind's p50.
import { randomUUID, createHash } from 'node:crypto';
import { round } from './load.mjs';
import { productHeaders } from './phases.mjs';
import { quoteProduct } from './quotes.mjs';

const p50 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
};

async function call(stack, method, path, json) {
  const t0 = performance.now();
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method,
    headers: { ...productHeaders(stack), 'content-type': 'application/json', prefer: 'wait=15', 'idempotency-key': randomUUID() },
    body: JSON.stringify(json),
  });
  const body = await res.json().catch(() => undefined);
  return { status: res.status, body, ms: performance.now() - t0 };
}

const submission = () => ({
  externalRef: 'bench-bind',
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: undefined,
  applicant: { legalName: `Bench Bind ${randomUUID()} LLC` },
  risk: { annualRevenue: 2500000, employees: 12, industry: 'retail' },
});

/** Sequential bind + wait and submit + wait, alternating blocks of `block`, `total` of each. */
export async function bindCost(stack, { total, block }) {
  // A product of its own (the quote phase's: the demo risk schema, nothing due, so quotable, and the
  // demo rating plan), so the phases after this one still submit to the bench's product as it was.
  const productId = await quoteProduct(stack);
  const lat = { bind: [], submit: [] };
  const errors = { bind: 0, submit: 0 };
  const bindOnce = async () => {
    const s = await call(stack, 'POST', '/v1/submissions', { ...submission(), productId });
    if (s.status !== 200) return void errors.bind++;
    const q = await call(stack, 'POST', `/v1/submissions/${s.body.submissionId}/quotes`, { options: [{ limit: '1000000', retention: '10000' }] });
    const quote = q.body?.quotes?.[0];
    if (q.status !== 200 || quote?.status !== 'open') return void errors.bind++;
    const b = await call(stack, 'POST', `/v1/quotes/${quote.quoteId}/bind`, { offerSha256: createHash('sha256').update(quote.offer).digest('hex') });
    if (b.status !== 200 || typeof b.body?.policyNumber !== 'string') return void errors.bind++;
    lat.bind.push(b.ms);
  };
  const submitOnce = async () => {
    const s = await call(stack, 'POST', '/v1/submissions', { ...submission(), productId });
    if (s.status !== 200) return void errors.submit++;
    lat.submit.push(s.ms);
  };
  for (let i = 0; i < 5; i++) {
    await bindOnce();
    await submitOnce();
  }
  lat.bind.length = 0;
  lat.submit.length = 0;
  for (let done = 0; done < total; done += block) {
    for (let i = 0; i < Math.min(block, total - done); i++) await submitOnce();
    for (let i = 0; i < Math.min(block, total - done); i++) await bindOnce();
  }
  // The declarations PDF, rendered as the policy service renders it.
  const { renderDeclarations } = await import('../../services/policy/dist/issue/declarations.js');
  const d = {
    policyNumber: 'P-2027-00000001',
    insured: 'Bench Bind 0190c5f5-2a3b-7c4d-8e5f-6a7b8c9d0e1f LLC',
    product: 'Bench product',
    limit: '1000000',
    retention: '10000',
    premium: { amount: '3125.00', currency: 'USD' },
    effectiveDate: '2027-01-01',
    expirationDate: '2028-01-01',
    issuedAt: new Date(),
  };
  for (let i = 0; i < 10; i++) await renderDeclarations(d);
  const n = 50;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await renderDeclarations(d);
  const pdfMs = (performance.now() - t0) / n;
  const bindP50 = p50(lat.bind);
  const submitP50 = p50(lat.submit);
  return {
    bind: { p50: round(bindP50, 2), n: lat.bind.length, errors: errors.bind },
    submit: { p50: round(submitP50, 2), n: lat.submit.length, errors: errors.submit },
    ratio: bindP50 && submitP50 ? round(bindP50 / submitP50, 2) : null,
    pdfRenderMs: round(pdfMs, 2),
    pdfShare: bindP50 ? round(pdfMs / bindP50, 3) : null,
  };
}

/** The bind rows of the results table. */
export function bindRows(b, add) {
  add('bind+wait sequential p50', b.bind.p50, 'ms', b.submit.p50, 'submit+wait sequential p50, same run', { text: '≤ 3×', check: (x) => x !== null && x <= 3 });
  add('bind+wait: declarations PDF render (mean), share of bind+wait p50', b.pdfRenderMs, 'ms', b.bind.p50, 'bind+wait sequential p50');
}
