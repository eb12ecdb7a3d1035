// The results table: every product figure beside its baseline, the ratio, and the issue's target.
import { round } from './load.mjs';
import { readRows } from './reads.mjs';
import { bindRows } from './bind.mjs';

const fmt = (x, unit) => (x === null || x === undefined || Number.isNaN(x) ? '—' : `${typeof x === 'number' ? (Math.abs(x) >= 100 ? Math.round(x) : round(x, 2)) : x}${unit ? ` ${unit}` : ''}`);

/**
 * rows: {metric, product, unit, baseline?, baselineName?, ratio (product/baseline), target?, pass?}.
 * Targets are checked only in the full run (smoke runs are too short to mean anything).
 */
function rowAdder(rows, judge) {
  return (metric, product, unit, baseline, baselineName, target) => {
    const ratio = Number.isFinite(product) && Number.isFinite(baseline) && baseline !== 0 ? round(product / baseline, 2) : null;
    let pass = null;
    if (judge && target) pass = target.check(ratio, product);
    rows.push({ metric, product: round(product, 3), unit, baseline: round(baseline, 3), baselineName, ratio, target: target?.text ?? null, pass });
  };
}

/** The rows of `--only reads`: each read beside its read floor (issue 34). */
export function buildReadsTable(r, { judge }) {
  const rows = [];
  readRows(r.reads, rowAdder(rows, judge));
  return rows;
}

/** Issue 42: a quote request (one option, Prefer: wait) beside the submit it follows, same run. */
function quoteRows(q, add) {
  add('quote+wait sequential p50', q.quote.p50, 'ms', q.submit.p50, 'submit+wait sequential p50, same run', { text: '≤ 1.5×', check: (x) => x !== null && x <= 1.5 });
  add('quote+wait sequential p99', q.quote.p99, 'ms', q.submit.p99, 'submit+wait sequential p99, same run');
}

/** Issue 45: the request log may cost at most 5 % CPU per submit (a gateway recording beside one that does not, same slices). */
function requestLogRows({ on, off, storage }, add) {
  add('submit+wait 64 conns CPU/request, request log on', on.cpuMsPerRequest?.total, 'ms', off.cpuMsPerRequest?.total, 'request log off', { text: '≤ 105 % of request log off', check: (x) => x !== null && x <= 1.05 });
  add('submit+wait 64 conns, request log on', on.rps, 'req/s', off.rps, 'request log off');
  add('request log storage per request (table + indexes)', storage.bytesPerRequest, 'bytes', null, null);
}

/** The rows of `--only requestlog` (issue 45). */
export function buildRequestLogTable(r, { judge }) {
  const rows = [];
  requestLogRows(r.experiments.requestLog, rowAdder(rows, judge));
  return rows;
}

export function buildTable(r, { judge, only } = {}) {
  const rows = [];
  const add = rowAdder(rows, judge);
  if (only === 'quotes') {
    quoteRows(r.quotes, add);
    return rows;
  }
  const s = r.submit;
  const f = r.baselines.floor;
  add('submit+wait sequential p50', s.sequential.product.latencyMs.p50, 'ms', f.sequential.latencyMs.p50, 'floor pipeline', { text: '≤ 2.5× floor (stretch 2×)', check: (x) => x !== null && x <= 2.5 });
  add('submit+wait sequential p99', s.sequential.product.latencyMs.p99, 'ms', f.sequential.latencyMs.p99, 'floor pipeline', { text: '≤ 3× floor', check: (x) => x !== null && x <= 3.0 });
  for (const c of ['c16', 'c64']) {
    const n = c.slice(1);
    add(`submit+wait ${n} conns throughput`, s[c].rps, 'req/s', f[c].rps, 'floor pipeline',
      c === 'c64' ? { text: '≥ 50 % of floor', check: (x) => x !== null && x >= 0.5 } : undefined);
    add(`submit+wait ${n} conns p50`, s[c].latencyMs.p50, 'ms', f[c].latencyMs.p50, 'floor pipeline');
    add(`submit+wait ${n} conns p99`, s[c].latencyMs.p99, 'ms', f[c].latencyMs.p99, 'floor pipeline');
    add(`submit+wait ${n} conns CPU/request (all processes + PG)`, s[c].cpuMsPerRequest?.total, 'ms', f[c].cpuMsPerRequest?.total, 'floor pipeline',
      c === 'c64' ? { text: '≤ 2× floor', check: (x) => x !== null && x <= 2.0 } : undefined);
  }
  // Adaptive batching (issue 20): the mean calls per statement of each batched step, per load.
  for (const [c, label] of [['sequential', 'sequential'], ['c16', '16 conns'], ['c64', '64 conns']]) {
    for (const [step, b] of Object.entries(s[c]?.batches ?? {})) add(`mean batch size ${step}, ${label}`, b.meanSize, 'calls');
  }
  if (r.experiments?.workerConcurrency128) {
    const e = r.experiments.workerConcurrency128;
    add('submit+wait 64 conns, WORKER_CONCURRENCY=128', e.product.rps, 'req/s', e.floor.rps, 'floor pipeline, same slices');
  }
  if (r.experiments?.claim) {
    // Issue 31: the claim before every effect may cost at most 10 % of throughput and of CPU per submit.
    const { on, off } = r.experiments.claim;
    add('submit+wait 64 conns, claim on', on.product.rps, 'req/s', off.product.rps, 'claim off (WORKER_CLAIM=false)', { text: '≥ 90 % of claim off', check: (x) => x !== null && x >= 0.9 });
    add('submit+wait 64 conns CPU/request, claim on', on.product.cpuMsPerRequest?.total, 'ms', off.product.cpuMsPerRequest?.total, 'claim off (WORKER_CLAIM=false)', { text: '≤ 110 % of claim off', check: (x) => x !== null && x <= 1.1 });
    add('floor pipeline 64 conns beside claim on', on.floor.rps, 'req/s', off.floor.rps, 'floor beside claim off (drift)');
  }
  if (r.clearance) {
    // Issue 30: clearance (a taxId's lock and probes beside the name's) may cost at most 10 % of either.
    const c = r.clearance;
    add('submit+wait sequential p50, taxId on every submission', c.sequential.withTaxId.p50, 'ms', c.sequential.without.p50, 'no taxId (same run)', { text: '≤ 110 % of no taxId', check: (x) => x !== null && x <= 1.1 });
    add('submit+wait 64 conns, taxId on every submission', c.c64.withTaxId.rps, 'req/s', c.c64.without.rps, 'no taxId (same run)', { text: '≥ 90 % of no taxId', check: (x) => x !== null && x >= 0.9 });
  }
  if (r.experiments?.receipts) {
    // Issue 32: signed receipts may cost at most 10 % of throughput and of CPU per submit.
    const { on, off } = r.experiments.receipts;
    add('submit+wait 64 conns, receipts on', on.product.rps, 'req/s', off.product.rps, 'receipts off (RECEIPTS_ISSUE=false)', { text: '≥ 90 % of receipts off', check: (x) => x !== null && x >= 0.9 });
    add('submit+wait 64 conns CPU/request, receipts on', on.product.cpuMsPerRequest?.total, 'ms', off.product.cpuMsPerRequest?.total, 'receipts off (RECEIPTS_ISSUE=false)', { text: '≤ 110 % of receipts off', check: (x) => x !== null && x <= 1.1 });
    add('floor pipeline 64 conns beside receipts on', on.floor.rps, 'req/s', off.floor.rps, 'floor beside receipts off (drift)');
  }
  if (r.experiments?.requestLog) requestLogRows(r.experiments.requestLog, add);
  const b = r.baselines;
  add('GET /v1/health 50 conns throughput', r.health.product.rps, 'req/s', b.koaBare.rps, 'bare Koa', { text: '≥ 60 % of bare Koa', check: (x) => x !== null && x >= 0.6 });
  add('GET /v1/health 50 conns throughput', r.health.product.rps, 'req/s', b.koaJose.rps, 'Koa + jose ES256');
  add('GET /v1/health server CPU/request', r.health.product.cpuMsPerRequest?.total, 'ms', b.koaBare.cpuMsPerRequest?.total, 'bare Koa');
  if (r.validate) {
    add('POST /v1/submissions/validate 50 conns throughput', r.validate.validate.rps, 'req/s', r.validate.health.rps, 'GET /v1/health, same slices', { text: '≥ 50 % of health', check: (x) => x !== null && x >= 0.5 });
    add('POST /v1/submissions/validate 50 conns p50', r.validate.validate.latencyMs.p50, 'ms', r.validate.health.latencyMs.p50, 'GET /v1/health, same slices');
    add('POST /v1/submissions/validate 50 conns p99', r.validate.validate.latencyMs.p99, 'ms', r.validate.health.latencyMs.p99, 'GET /v1/health, same slices');
  }
  add('GET /v1/health server CPU/request', r.health.product.cpuMsPerRequest?.total, 'ms', b.koaJose.cpuMsPerRequest?.total, 'Koa + jose ES256');
  add('GET /v1/health 50 conns p50', r.health.product.latencyMs.p50, 'ms', b.koaBare.latencyMs.p50, 'bare Koa');
  add('GET /v1/health 50 conns p99', r.health.product.latencyMs.p99, 'ms', b.koaBare.latencyMs.p99, 'bare Koa');
  if (r.health.productInfoLogs) {
    add('GET /v1/health, LOG_LEVEL=info', r.health.productInfoLogs.rps, 'req/s', r.health.productInfoLogs.koaBareSameSlices, 'bare Koa, same slices');
  }
  // Reads (issue 34): each beside its read floor, same slices.
  if (r.reads) readRows(r.reads, add);
  add('wake-up p50 (settled_at → response)', r.wakeup.fromSettleMs.p50, 'ms', null, null);
  add('wake-up p99 (settled_at → response)', r.wakeup.fromSettleMs.p99, 'ms', null, null, { text: '≤ 5 ms', check: (_x, v) => v !== null && v <= 5 });
  add('wake-up p99 (event → response)', r.wakeup.fromEventMs.p99, 'ms', null, null);
  if (r.events) {
    const ev = r.events;
    add('event feed: settle commit → long-poll reader p50', ev.wakeup.fromCommitMs.p50, 'ms', null, null);
    add('event feed: settle commit → long-poll reader p99', ev.wakeup.fromCommitMs.p99, 'ms', null, null, { text: '≤ 10 ms', check: (_x, v) => v !== null && v <= 10 });
    add('GET /v1/events?limit=100 16 conns', ev.reads.feed.rps, 'req/s', ev.reads.policies.rps, 'GET /v1/policies?limit=100, same slices');
    add('GET /v1/events?limit=100 p50 / p99', ev.reads.feed.latencyMs.p50, 'ms', null, null);
    rows.at(-1).product = `${fmt(ev.reads.feed.latencyMs.p50)} / ${fmt(ev.reads.feed.latencyMs.p99)}`;
    add(`${ev.idle.readers} idle feed readers: extra gateway RSS`, ev.idle.extraRssMb, 'MB', null, null);
    add(`${ev.idle.readers} idle feed readers: DB queries while idle`, ev.idle.queriesWhileIdle, '', null, null, { text: '0', check: (_x, v) => v === 0 });
    add(`${ev.idle.readers} idle feed readers: all answered after a submit`, ev.idle.allAnsweredAfterSubmitMs, 'ms', null, null);
    rows.at(-1).product = `${fmt(ev.idle.allAnsweredAfterSubmitMs)} (${ev.idle.ok}/${ev.idle.readers} ok)`;
  }
  if (r.webhooks) {
    const wh = r.webhooks;
    add('webhook: settle commit → receiver p50', wh.latency.fromCommitMs.p50, 'ms', null, null);
    add('webhook: settle commit → receiver p99', wh.latency.fromCommitMs.p99, 'ms', null, null, { text: '≤ 20 ms', check: (_x, v) => v !== null && v <= 20 });
    const f = wh.fanout;
    add(`webhook fan-out ${f.healthy.events} events × ${f.healthy.endpoints} endpoints`, f.healthy.deliveriesPerS, 'deliveries/s', null, null);
    add('webhook fan-out CPU/delivery (dispatcher + events + PG)', f.healthy.cpuMsPerDelivery.total, 'ms', null, null);
    add(`webhook fan-out healthy p99, ${f.withHanging.hanging} of ${f.withHanging.endpoints} hanging`, f.withHanging.fromCommitMs.p99, 'ms', f.healthy.fromCommitMs.p99, 'all endpoints healthy', {
      text: '≤ 2× all healthy',
      check: (x) => x !== null && x <= 2,
    });
  }
  if (r.quotes) quoteRows(r.quotes, add);
  if (r.bind) bindRows(r.bind, add);
  if (r.noisy) {
    const n = r.noisy;
    const twice = { text: '≤ 2× alone', check: (x) => x !== null && x <= 2 };
    add(`another tenant's GET /v1/health p99 during a ${n.floodRps} req/s flood`, n.flooded.healthMs.p99, 'ms', n.alone.healthMs.p99, 'no flood', twice);
    add("another tenant's settle commit → webhook p99 during the flood", n.flooded.webhookFromCommitMs.p99, 'ms', n.alone.webhookFromCommitMs.p99, 'no flood', twice);
  }
  for (const c of [1, 32]) {
    const at = (label) => r.grpcTransport?.results.find((x) => x.label === label && x.concurrency === c);
    if (at('stream')) add(`gRPC CPU per call, ${c} in flight: stream vs unary`, at('stream').cpuMsPerCall, 'ms', at('unary').cpuMsPerCall, 'unary call');
  }
  const w = r.waiters;
  add(`${w.waiters} waiters: extra gateway RSS after a forced GC`, w.afterGc?.extraRssMb, 'MB', null, null, { text: '< 200 MB', check: (_x, v) => v !== null && v < 200 });
  add(`${w.waiters} waiters: live heap per waiter after a forced GC`, w.afterGc?.heapKbPerWaiter, 'KB', null, null);
  add(`${w.waiters} waiters: extra gateway RSS, no forced GC`, w.extraRssMb, 'MB', null, null);
  add(`${w.waiters} waiters: DB queries while waiting`, w.queriesWhileWaiting, '', null, null, {
    text: '0',
    check: (_x, v) => v === 0 && w.pgStatActivityBackendsActiveInWindow === 0,
  });
  add(`${w.waiters} waiters: all answered after first settle`, w.settle.allAnsweredAfterFirstSettleMs, 'ms', null, null);
  rows.at(-1).product = `${fmt(w.settle.allAnsweredAfterFirstSettleMs)} (${w.settle.ok}/${w.waiters} ok)`;
  return rows;
}

export function renderTable(rows) {
  const head = ['metric', 'product', 'baseline', 'ratio', 'target', 'result'];
  const body = rows.map((r) => [
    r.metric,
    typeof r.product === 'string' ? `${r.product} ${r.unit}` : fmt(r.product, r.unit),
    r.baselineName ? `${fmt(r.baseline, r.unit)} (${r.baselineName})` : '',
    r.ratio === null ? '' : `${r.ratio}×`,
    r.target ?? '',
    r.pass === null ? '' : r.pass ? 'PASS' : 'FAIL',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => String(row[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}
