#!/usr/bin/env node
// `npm run bench`: measures the product against baselines run side by side on the same machine in the
// same run (issue 10), prints a table of figures, ratios and targets, and writes the results as JSON
// to bench/results/<timestamp>.json and bench/results/latest.json.
//
//   npm run bench                   the full run (a few minutes on 2 cores)
//   npm run bench -- --smoke        seconds, tiny counts, no thresholds (CI; or BENCH_SMOKE=1)
//   npm run bench -- --profile      CPU profiles of every service and database round trips per request
//   npm run bench -- --clearance    only the clearance phase (taxId on every submission vs none), full counts
//   npm run bench -- --only receipts   the receipts experiment alone (issue 32), beside the floor
//   npm run bench -- --only events     the event path alone (issue 34): feed and webhook latency by
//                                      stage, webhook fan-out, 10,000 waiters (≤ 3 min)
//   npm run bench -- --only reads      the reads alone beside the read floor (issue 34; ~2 min)
//   npm run bench -- --only noisy      the noisy neighbour alone: request flood, then validate flood (issue 48; ~1 min)
//   npm run bench -- --only bind       bind + wait beside submit + wait, sequential, with the PDF's share (issue 43)
//   npm run bench -- --only quotes     quote+wait beside submit+wait, sequential, same run (issue 42; ~1 min)
//   npm run bench -- --only submit     submit+wait sequential beside the floor, with its timeline by stage, and the
//                                      WAL flushes per submit (issue 47; ~1.5 min)
//   npm run bench -- --only requestlog the request log's cost (issue 45): submit+wait through a gateway recording
//                                      and one not, same slices; and its storage per request (~1 min)
//   npm run bench -- --profile --only reads   CPU profiles of every process under the read load alone
//   options: --no-build (use the existing dist/), --out FILE (write the JSON there instead)
//   environment: BENCH_ANALYZE_S (seconds between ANALYZEs of the bench database, standing in for
//   autovacuum, which PostgreSQL here runs without; default 10, 0 = never), BENCH_PG_URL and
//   BENCH_NATS_URL (other servers), BENCH_SERVICE_ENV ("NAME=value,…" for every service)
//
// It never touches a running `npm start`: its own database (partner_bench_<id>, dropped at the end),
// its own NATS prefix (bench_<id>; streams deleted at the end) and free ports. See docs/performance.md.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname } from 'node:path';
import { ANALYZE_EVERY_S, BenchStack, ROOT, cpuDuring, freePorts, sleep, submitPath, submitPathWithDatabase } from '../bench/lib/stack.mjs';
import { serviceScript } from './lib/launch.mjs';
import { processNames, schemaOwners } from './lib/processes.mjs';
import { startBaselines } from '../bench/lib/baselines.mjs';
import { cannon, interleave, round } from '../bench/lib/load.mjs';
import { CountingPgProxy } from '../bench/lib/pgproxy.mjs';
import { checks, floorSubmit, hops, productHeaders, productSubmit, sequential, timeline, wakeup, walPerSubmit } from '../bench/lib/phases.mjs';
import { manyWaiters } from '../bench/lib/waiters.mjs';
import { withBatchSizes } from '../bench/lib/batches.mjs';
import { grpcTransport } from '../bench/lib/grpc-transport.mjs';
import { buildTable, renderTable } from '../bench/lib/report.mjs';
import { runProfile } from '../bench/lib/profile.mjs';
import { feedReads, feedWakeup, idleFeedReaders } from '../bench/lib/events.mjs';
import { webhookFanout, webhookLatency } from '../bench/lib/webhooks.mjs';
import { clearanceCost } from '../bench/lib/clearance.mjs';
import { noisyNeighbour } from '../bench/lib/noisy.mjs';
import { validatePhase } from '../bench/lib/validate.mjs';
import { receiptsCost } from '../bench/lib/receipts.mjs';
import { requestLogCost } from '../bench/lib/request-log.mjs';
import { eventPathRows } from '../bench/lib/event-stages.mjs';
import { readPhases, startReadFloor } from '../bench/lib/reads.mjs';
import { buildReadsTable, buildRequestLogTable } from '../bench/lib/report.mjs';
import { bindCost, bindRows } from '../bench/lib/bind.mjs';
import { quoteCost } from '../bench/lib/quotes.mjs';

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const option = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const smoke = flag('--smoke') || process.env.BENCH_SMOKE === '1';
if (smoke) process.env.BENCH_DB_POOL_MAX ??= '4';
const profile = flag('--profile');
// --only validate | receipts | reads | events | noisy | requestlog | submit: start the stack, run that phase alone, write its results.
const only = option('--only');
const ONLY = ['validate', 'receipts', 'reads', 'events', 'noisy', 'bind', 'quotes', 'requestlog', 'submit'];
if (only !== undefined && !ONLY.includes(only)) {
  process.stderr.write(`✖ --only takes: ${ONLY.join(', ')}\n`);
  process.exit(2);
}
const out = option('--out');
const started = Date.now();
const say = (msg) => process.stdout.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);

// Counts of each phase: the full run, and the smoke run (seconds; proves only that nothing rotted).
const P = smoke
  ? { rounds: 1, warmS: 0.5, seq: 20, block: 10, concS: 1.5, healthS: 1, readS: 1, wake: 5, wakeRate: 5, waiters: 200, waiterJobs: 4, windowMs: 1_000, hopN: 20, policies: 120, heapWaiters: 200, feedReaders: 100, fanEvents: 20, fanEndpoints: 10, fanHanging: 2, noisyS: 1.5 }
  : { rounds: 2, warmS: 3, seq: 300, block: 50, concS: 10, healthS: 8, readS: 6, wake: 200, wakeRate: 12, waiters: 10_000, waiterJobs: 20, windowMs: 5_000, hopN: 300, policies: 200, heapWaiters: 2_000, feedReaders: 2_000, fanEvents: 1_000, fanEndpoints: 50, fanHanging: 5, noisyS: 10 };

// 10,000 sockets on each side need file descriptors: raise the soft limit to the hard one, or run
// again under a shell that does (the services inherit it).
function openFilesLimit() {
  const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  const n = (v) => (v === 'unlimited' ? Infinity : Number(v));
  return m ? { soft: n(m[1]), hard: n(m[2]) } : { soft: Infinity, hard: Infinity };
}
const needFds = P.waiters + 2_000;
const fds = openFilesLimit();
if (fds.soft < needFds && !process.env.BENCH_ULIMIT_RAISED) {
  if (fds.hard >= needFds) {
    const r = spawnSync('sh', ['-c', `ulimit -n ${fds.hard} && exec "$0" "$@"`, process.execPath, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_ULIMIT_RAISED: '1' },
    });
    process.exit(r.status ?? 1);
  }
  say(`open-files limit ${fds.soft} (hard ${fds.hard}) is below ${needFds}: the waiters phase holds ${Math.max(100, fds.hard - 2_000)} instead`);
  P.waiters = Math.max(100, fds.hard - 2_000);
}

if (!flag('--no-build')) {
  say('building (npm run build)');
  const r = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    process.stderr.write('✖ npm run build failed\n');
    process.exit(1);
  }
}
for (const s of processNames()) {
  if (!existsSync(serviceScript(s))) {
    process.stderr.write(`✖ ${serviceScript(s)} is missing: run npm run build (or drop --no-build)\n`);
    process.exit(1);
  }
}

const stack = new BenchStack();
const proxies = {};
let cleaning;
const cleanup = async () => {
  cleaning ??= (async () => {
    const problems = await stack.cleanup();
    for (const p of Object.values(proxies)) await p.close().catch(() => undefined);
    if (problems.length) process.stderr.write(`cleanup problems:\n  ${problems.join('\n  ')}\n`);
    return problems;
  })();
  return cleaning;
};
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    say(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

const meta = () => ({
  mode: smoke ? 'smoke' : profile ? 'profile' : 'full',
  startedAt: new Date(started).toISOString(),
  finishedAt: new Date().toISOString(),
  durationS: Math.round((Date.now() - started) / 100) / 10,
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
  loadavg: loadavg(),
  commit: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim(),
  dirty: spawnSync('git', ['status', '--porcelain', '--', 'services', 'proto'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() !== '',
  params: P,
  serviceEnv: process.env.BENCH_SERVICE_ENV ?? '',
  // ANALYZE of the bench database every so many seconds (0: never), as autovacuum would (stack.mjs).
  analyzeEveryS: ANALYZE_EVERY_S,
  note: 'Absolute figures depend on the machine and on whatever else runs on it; compare ratios from one run.',
});

function writeResults(results, name) {
  const stamp = new Date(started).toISOString().replace(/[:.]/g, '-');
  const json = `${JSON.stringify(results, null, 2)}\n`;
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, json);
    return [out];
  }
  const dir = `${ROOT}bench/results`;
  mkdirSync(dir, { recursive: true });
  // The full run: <timestamp>.json + latest.json; smoke and profile runs keep their own names.
  const files = name === 'bench' ? [`${dir}/${stamp}.json`, `${dir}/latest.json`] : [`${dir}/${name}-${stamp}.json`, `${dir}/${name}-latest.json`];
  for (const f of files) writeFileSync(f, json);
  return files;
}

async function main() {
  const loadBefore = loadavg();
  say(`starting a private stack (${smoke ? 'smoke' : profile ? 'profile' : 'full'} run)`);
  if (profile) {
    const results = await runProfile(stack, { P, say, proxies, only });
    results.meta = meta();
    const files = writeResults(results, 'profile');
    say(`profile written to ${files.join(', ')}`);
    return;
  }
  await stack.start({ onStep: say, policies: only && only !== 'reads' ? 0 : P.policies });
  if (flag('--clearance')) {
    const clearance = await clearanceCost(stack, { total: P.seq, block: P.block, rounds: P.rounds, seconds: P.concS / P.rounds, warmS: P.warmS });
    say(`clearance: ${JSON.stringify({ sequential: clearance.sequential, c64rps: { withTaxId: clearance.c64.withTaxId.rps, without: clearance.c64.without.rps, ratio: clearance.c64.rpsRatio } })}`);
    writeResults({ meta: { ...meta(), loadavgBefore: loadBefore }, clearance }, 'clearance');
    return;
  }
  if (only === 'validate') {
    const v = await validatePhase(stack, { rounds: P.rounds, seconds: P.healthS, warmS: P.warmS });
    say(`validate: ${v.validate.rps} req/s (p50 ${v.validate.latencyMs.p50} ms, p99 ${v.validate.latencyMs.p99} ms); health in the same slices ${v.health.rps} req/s (p50 ${v.health.latencyMs.p50}, p99 ${v.health.latencyMs.p99}); ratio ${v.ratio}`);
    const files = writeResults({ meta: { ...meta(), loadavgBefore: loadBefore }, validate: v, serviceErrors: stack.serviceErrors() }, 'validate');
    say(`results written to ${files.map((f) => f.replace(ROOT, '')).join(', ')}`);
    return;
  }
  if (only === 'noisy') {
    const noisy = await noisyNeighbour(stack, { seconds: P.noisyS, floodRps: 45, ratePerS: P.wakeRate });
    say(`noisy neighbour: quiet partner's health p50/p99 alone ${noisy.alone.healthMs.p50}/${noisy.alone.healthMs.p99} ms, request flood ${noisy.flooded.healthMs.p50}/${noisy.flooded.healthMs.p99} ms (p99 ${noisy.healthP99Ratio}×), validate flood ${noisy.validateFlooded.healthMs.p50}/${noisy.validateFlooded.healthMs.p99} ms (p50 ${noisy.validateHealthP50Ratio}×, p99 ${noisy.validateHealthP99Ratio}×); validate flood ${JSON.stringify(noisy.validateFloodStatuses)}`);
    const files = writeResults({ meta: { ...meta(), loadavgBefore: loadBefore, only: 'noisy' }, noisy, serviceErrors: stack.serviceErrors() }, 'noisy');
    say(`results written to ${files.map((f) => f.replace(ROOT, '')).join(', ')}`);
    return;
  }
  if (only === 'events') {
    await eventsOnly(loadBefore);
    return;
  }
  if (only === 'bind') {
    const bind = await bindCost(stack, { total: Math.min(P.seq, smoke ? 10 : 100), block: P.block / 2 });
    say(`bind+wait sequential p50 ${bind.bind.p50} ms (n ${bind.bind.n}, errors ${bind.bind.errors}), submit+wait p50 ${bind.submit.p50} ms, ratio ${bind.ratio}; declarations PDF ${bind.pdfRenderMs} ms (${bind.pdfShare} of the bind)`);
    const table = [];
    bindRows(bind, (metric, product, unit, baseline, baselineName, target) => {
      const ratio = Number.isFinite(product) && Number.isFinite(baseline) && baseline !== 0 ? round(product / baseline, 2) : null;
      table.push({ metric, product, unit, baseline, baselineName, ratio, target: target?.text ?? null, pass: !smoke && target ? target.check(ratio) : null });
    });
    process.stdout.write(`\n${renderTable(table)}\n\n`);
    const files = writeResults({ meta: { ...meta(), loadavgBefore: loadBefore, only: 'bind' }, table, bind, serviceErrors: stack.serviceErrors() }, 'bind');
    say(`results written to ${files.map((f) => f.replace(ROOT, '')).join(', ')}`);
    return;
  }
  if (only === 'quotes') {
    const quotes = await quoteCost(stack, { total: P.seq, warm: smoke ? 2 : 20 });
    say(`quotes: quote+wait p50 ${quotes.quote.p50} ms (p99 ${quotes.quote.p99}), submit+wait p50 ${quotes.submit.p50} ms (p99 ${quotes.submit.p99}), ratio ${quotes.p50Ratio}; ${quotes.errors} errors`);
    const table = buildTable({ quotes }, { judge: !smoke, only: 'quotes' });
    process.stdout.write(`\n${renderTable(table)}\n\n`);
    const files = writeResults({ meta: { ...meta(), loadavgBefore: loadBefore, only: 'quotes' }, table, quotes, serviceErrors: stack.serviceErrors() }, 'quotes');
    say(`results written to ${files.map((f) => f.replace(ROOT, '')).join(', ')}`);
    return;
  }
  // --- reads (issue 34): the three reads beside the read floor, alone -------------------------------
  if (only === 'reads') {
    const floor = await startReadFloor(stack);
    say('read floor ready');
    const reads = await readPhases(stack, floor, { rounds: P.rounds * 2, seconds: P.readS * 2, warmS: P.warmS });
    for (const [k, v] of Object.entries(reads)) {
      say(`${k}: product ${v.product.rps} req/s, ${v.product.cpuMsPerRequest?.total} ms CPU/req; read floor ${v.floor.rps} req/s, ${v.floor.cpuMsPerRequest?.total} ms CPU/req`);
    }
    const table = buildReadsTable({ reads }, { judge: !smoke });
    process.stdout.write(`\n${renderTable(table)}\n\n`);
    const serviceErrors = [...stack.serviceErrors(), ...floor.proc.errors.map((e) => `read-floor: ${e}`)];
    const files = writeResults({ meta: { ...meta(), loadavgBefore: loadBefore }, table, reads, serviceErrors }, 'reads');
    say(`results written to ${files.map((f) => f.replace(ROOT, '')).join(', ')}`);
    const failures = table.filter((row) => row.pass === false).map((row) => row.metric);
    if (!smoke) say(failures.length ? `targets missed: ${failures.join('; ')}` : 'all read targets met');
    return;
  }
  // --- end of reads --------------------------------------------------------------------------------
  const baselines = await startBaselines(stack);
  say('baselines ready (bare Koa, Koa + jose, floor pipeline)');
  const gw = stack.gatewayUrl;
  const health = { method: 'GET', path: '/v1/health', headers: productHeaders(stack) };
  const r = { baselines: {}, submit: {}, health: {} };

  // Warm-up: JIT, pools, gRPC channels, JetStream consumers — of every target.
  for (const [url, request, check] of [
    [baselines.urls.koaBare, { path: '/v1/health' }, checks.health],
    [baselines.urls.koaJose, health, checks.health],
    [gw, health, checks.health],
    [baselines.urls.floor, floorSubmit(stack), checks.submitted],
    [gw, productSubmit(stack), checks.submitted],
  ]) {
    await cannon({ url, request, check, connections: 8, duration: P.warmS });
  }
  say('warmed up');
  if (only === 'requestlog') {
    r.experiments = { requestLog: await requestLogCost({ stack, P, say }) };
    r.meta = meta();
    const table = buildRequestLogTable(r, { judge: !smoke });
    process.stdout.write(`\n${renderTable(table)}\n\n`);
    say(`results written to ${writeResults({ ...r, table, serviceErrors: stack.serviceErrors() }, 'requestlog').join(', ')}`);
    return;
  }
  if (only === 'receipts') {
    const floorProcs = { 'floor-http': baselines.procs.floorHttp, 'floor-worker': baselines.procs.floorWorker };
    const floorCpu = (fn) => cpuDuring(stack, { procs: floorProcs, pgApps: ['floor-http', 'floor-worker'] }, fn);
    r.experiments = { receipts: await receiptsCost({ stack, floorUrl: baselines.urls.floor, floorCpu, P, say }) };
    r.meta = meta();
    const { on, off } = r.experiments.receipts;
    say(`receipts on/off: throughput ${round(on.product.rps / off.product.rps, 3)} (target ≥ 0.9), CPU per submit ${round(on.product.cpuMsPerRequest.total / off.product.cpuMsPerRequest.total, 3)} (target ≤ 1.1)`);
    say(`results written to ${writeResults(r, 'receipts').join(', ')}`);
    return;
  }

  // Submit + wait: sequential (interleaved with the floor), then 16 and 64 connections.
  const seq = await withBatchSizes(stack, () => sequential(stack, baselines.urls, { total: P.seq, block: P.block }));
  r.submit.sequential = { product: seq.product, batches: seq.batches };
  r.baselines.floor = { sequential: seq.floor };
  say(`sequential: product p50 ${seq.product.latencyMs.p50} ms, floor p50 ${seq.floor.latencyMs.p50} ms`);
  // A run whose submits fail says how at once (a test of the smoke run sees only its output's tail).
  if (seq.product.errors > 0) say(`sequential: ${seq.product.errors} product errors, e.g. ${JSON.stringify(seq.product.badSamples).slice(0, 600)}`);
  say(`sequential: mean batch ${Object.entries(seq.batches).map(([k, v]) => `${k} ${v.meanSize}`).join(', ')}`);
  r.timeline = await timeline(stack, seq.records, seq.tap);
  if (only === 'submit') {
    printTimeline(r.timeline);
    const ratio = round(seq.product.latencyMs.p50 / seq.floor.latencyMs.p50, 2);
    say(`sequential p50 ÷ floor: ${ratio}× (${seq.product.latencyMs.p50} / ${seq.floor.latencyMs.p50} ms)`);
    const wal = await walPerSubmit(stack, { total: smoke ? 20 : 300 });
    say(`WAL per submit (${wal.submits} sequential, the server's pg_stat_wal): ${wal.flushes} flushes, ${wal.writes} writes, ${wal.records} records, ${wal.bytes} bytes`);
    const files = writeResults({ meta: { ...meta(), loadavgBefore: loadBefore, only: 'submit' }, ratio, wal, ...r, serviceErrors: stack.serviceErrors() }, 'submit');
    say(`results written to ${files.map((f) => f.replace(ROOT, '')).join(', ')}`);
    return;
  }
  // Submit + wait at 16 and 64 connections, floor and product in alternating slices. CPU time per
  // request (user + system, from /proc) of every process involved, PostgreSQL backends included: on a
  // 2-core machine this, more than latency, bounds throughput.
  const productProcs = Object.fromEntries(submitPath().map((s) => [s, stack.procs.get(s)]));
  const floorProcs = { 'floor-http': baselines.procs.floorHttp, 'floor-worker': baselines.procs.floorWorker };
  const productCpu = (fn) => cpuDuring(stack, { procs: productProcs, pgApps: submitPathWithDatabase() }, fn);
  const floorCpu = (fn) => cpuDuring(stack, { procs: floorProcs, pgApps: ['floor-http', 'floor-worker'] }, fn);
  for (const c of [16, 64]) {
    await cannon({ url: baselines.urls.floor, request: floorSubmit(stack), check: checks.submitted, connections: c, duration: P.warmS });
    await cannon({ url: gw, request: productSubmit(stack), check: checks.submitted, connections: c, duration: P.warmS });
    // The floor's slices touch no service, so the batches counted are the product's slices'.
    const res = await withBatchSizes(stack, () =>
      interleave(
        [
          { name: 'floor', url: baselines.urls.floor, request: floorSubmit(stack), check: checks.submitted, measure: floorCpu },
          { name: 'product', url: gw, request: productSubmit(stack), check: checks.submitted, measure: productCpu },
        ],
        { rounds: P.rounds, seconds: P.concS / P.rounds, connections: c },
      ),
    );
    r.baselines.floor[`c${c}`] = res.floor;
    r.submit[`c${c}`] = { ...res.product, batches: res.batches };
    say(`${c} connections: mean batch ${Object.entries(res.batches).map(([k, v]) => `${k} ${v.meanSize}`).join(', ')}`);
    say(
      `${c} connections: product ${res.product.rps} req/s (${res.product.cpuMsPerRequest.total} ms CPU/req), ` +
        `floor ${res.floor.rps} req/s (${res.floor.cpuMsPerRequest.total} ms CPU/req)`,
    );
  }

  // The worker run with `env` (then submit+wait at 64 connections beside the floor in the same slices,
  // so the floor shows how the machine drifted between two such runs).
  const procsNow = () => Object.fromEntries(submitPath().map((s) => [s, stack.procs.get(s)]));
  const withWorker = async (env, rounds) => {
    await stack.stopService('worker');
    await stack.startService('worker', { env });
    await cannon({ url: gw, request: productSubmit(stack), check: checks.submitted, connections: 64, duration: P.warmS });
    return interleave(
      [
        { name: 'floor', url: baselines.urls.floor, request: floorSubmit(stack), check: checks.submitted, measure: floorCpu },
        {
          name: 'product',
          url: gw,
          request: productSubmit(stack),
          check: checks.submitted,
          measure: (fn) => cpuDuring(stack, { procs: procsNow(), pgApps: submitPathWithDatabase() }, fn),
        },
      ],
      { rounds, seconds: P.concS / P.rounds, connections: 64 },
    );
  };

  // Experiment: at 64 connections, is the product bound by the worker's concurrency (64 jobs at once
  // by default since issue 47; 16 before, which was the bound) rather than by CPU? The same run with
  // twice as many, WORKER_CONCURRENCY=128, then back.
  const exp = await withWorker({ WORKER_CONCURRENCY: '128' }, 1);
  r.experiments = { workerConcurrency128: { product: exp.product, floor: exp.floor } };
  say(`64 connections with WORKER_CONCURRENCY=128: product ${exp.product.rps} req/s, floor ${exp.floor.rps} req/s`);

  // Experiment (issue 31): what the claim before every effect costs. 64 connections with the worker's
  // claim off (WORKER_CLAIM=false, bench only), then on again (the default worker from here on).
  const claimRun = (env) => withWorker(env, P.rounds);
  const claimOff = await claimRun({ WORKER_CLAIM: 'false' });
  const claimOn = await claimRun({});
  productProcs.worker = stack.procs.get('worker');
  // Experiment (issue 32): what signed receipts cost (the submission service with RECEIPTS_ISSUE=false, then on).
  r.experiments.receipts = await receiptsCost({ stack, floorUrl: baselines.urls.floor, floorCpu, P, say });
  productProcs.submission = stack.procs.get('submission');
  // Experiment (issue 45): what the request log costs a submit (a gateway recording beside one that does not, same slices).
  r.experiments.requestLog = await requestLogCost({ stack, P, say });
  r.experiments.claim = { off: { product: claimOff.product, floor: claimOff.floor }, on: { product: claimOn.product, floor: claimOn.floor } };
  say(
    `64 connections, claim off: ${claimOff.product.rps} req/s, ${claimOff.product.cpuMsPerRequest?.total} ms CPU/req (floor ${claimOff.floor.rps} req/s); ` +
      `claim on: ${claimOn.product.rps} req/s, ${claimOn.product.cpuMsPerRequest?.total} ms CPU/req (floor ${claimOn.floor.rps} req/s)`,
  );

  // Clearance (issue 30): submit+wait with a taxId on every submission against the same run without one.
  r.clearance = await clearanceCost(stack, { total: P.seq, block: P.block, rounds: P.rounds, seconds: P.concS / P.rounds, warmS: P.warmS });
  say(
    `clearance: sequential p50 ${r.clearance.sequential.withTaxId.p50} ms with a taxId, ${r.clearance.sequential.without.p50} ms without (${r.clearance.sequential.p50Ratio}×); ` +
      `64 connections ${r.clearance.c64.withTaxId.rps} req/s with, ${r.clearance.c64.without.rps} without (${r.clearance.c64.rpsRatio}×)`,
  );

  // Quotes and binds (issues 42, 43): each beside the submit+wait of the same loop, so every ratio of
  // issue 47's item 4 comes from the full run too (the same phases as --only quotes / --only bind).
  r.quotes = await quoteCost(stack, { total: P.seq, warm: smoke ? 2 : 20 });
  say(`quotes: quote+wait p50 ${r.quotes.quote.p50} ms, submit+wait p50 ${r.quotes.submit.p50} ms, ratio ${r.quotes.p50Ratio}; ${r.quotes.errors} errors`);
  r.bind = await bindCost(stack, { total: Math.min(P.seq, smoke ? 10 : 100), block: P.block / 2 });
  say(`bind+wait sequential p50 ${r.bind.bind.p50} ms, submit+wait p50 ${r.bind.submit.p50} ms, ratio ${r.bind.ratio}`);

  // Health at 50 connections: bare Koa, Koa + jose, the product, in alternating slices. At ~20,000
  // requests/s the load generator shares the 2 cores with the server, so the server's own CPU time per
  // request is recorded beside the throughput.
  const cpuOf = (proc) => (fn) => cpuDuring(stack, { procs: { server: proc }, pgApps: [] }, fn);
  const hres = await interleave(
    [
      { name: 'koaBare', url: baselines.urls.koaBare, request: { path: '/v1/health' }, check: checks.health, measure: cpuOf(baselines.procs.koaBare) },
      { name: 'koaJose', url: baselines.urls.koaJose, request: health, check: checks.health, measure: cpuOf(baselines.procs.koaJose) },
      { name: 'product', url: gw, request: health, check: checks.health, measure: cpuOf(productProcs.gateway) },
    ],
    { rounds: P.rounds * 2, seconds: P.healthS / (P.rounds * 2), connections: 50 },
  );
  r.baselines.koaBare = hres.koaBare;
  r.baselines.koaJose = hres.koaJose;
  r.health.product = hres.product;
  say(`health: product ${r.health.product.rps} req/s, bare Koa ${r.baselines.koaBare.rps}, Koa + jose ${r.baselines.koaJose.rps}`);
  // The same gateway binary at the default LOG_LEVEL=info (one JSON line per request, to /dev/null).
  const [infoPort, infoOps] = await freePorts(2);
  await stack.startService('gateway', { key: 'gateway-info', env: { PORT: String(infoPort), LOG_LEVEL: 'info' }, opsPort: infoOps, stdout: 'ignore' });
  const infoUrl = `http://127.0.0.1:${infoPort}`;
  await cannon({ url: infoUrl, request: health, check: checks.health, connections: 50, duration: P.warmS });
  const ires = await interleave(
    [
      { name: 'koaBare', url: baselines.urls.koaBare, request: { path: '/v1/health' }, check: checks.health },
      { name: 'info', url: infoUrl, request: health, check: checks.health },
    ],
    { rounds: P.rounds, seconds: P.healthS / (P.rounds * 2), connections: 50 },
  );
  r.health.productInfoLogs = { ...ires.info, koaBareSameSlices: ires.koaBare.rps };
  await stack.stopService('gateway-info');
  say(`health at LOG_LEVEL=info: ${ires.info.rps} req/s (bare Koa in the same slices ${ires.koaBare.rps})`);

  // POST /v1/submissions/validate beside health (issue 29: ≥ 0.5× health's throughput).
  r.validate = await validatePhase(stack, { rounds: P.rounds, seconds: P.healthS, warmS: P.warmS });
  say(`validate: ${r.validate.validate.rps} req/s (p99 ${r.validate.validate.latencyMs.p99} ms), health in the same slices ${r.validate.health.rps} req/s: ${r.validate.ratio}×`);

  // --- reads (issue 34): a settled job, 50 policies, 100 events, each beside the read floor ---------
  const readFloor = await startReadFloor(stack);
  r.reads = await readPhases(stack, readFloor, smoke ? { rounds: 1, seconds: 0.5, warmS: 0.25 } : { rounds: P.rounds * 2, seconds: P.readS * 2, warmS: P.warmS });
  r.jobsRead = r.reads.jobs.product;
  r.policiesList = r.reads.policies.product;
  say(
    `reads (product / read floor): ${Object.entries(r.reads)
      .map(([k, v]) => `${k} ${v.product.rps} / ${v.floor.rps} req/s, ${v.product.cpuMsPerRequest?.total} / ${v.floor.cpuMsPerRequest?.total} ms CPU`)
      .join('; ')}`,
  );
  // --- end of reads --------------------------------------------------------------------------------

  // Single hops, then wake-up latency, then many waiters (restarts services, so last).
  r.hops = await hops(stack, { n: P.hopN });
  say('hop costs measured');
  r.grpcTransport = await grpcTransport({ n: smoke ? 500 : 5_000 });
  say(`gRPC transport: stream CPU per call ${r.grpcTransport.streamCpuRatio.c1}× unary's (1 in flight), ${r.grpcTransport.streamCpuRatio.c32}× (32 in flight)`);
  r.wakeup = await wakeup(stack, { count: P.wake, ratePerS: P.wakeRate });
  say(`wake-up: p50 ${r.wakeup.fromSettleMs.p50} ms, p99 ${r.wakeup.fromSettleMs.p99} ms (settled_at → response)`);
  // The event feed (issue 14): settlement → long-polling reader, feed pages against policy pages,
  // idle long-polling readers (restarts the gateway and the events service, so after the others).
  const evWakeup = await feedWakeup(stack, { count: P.wake, ratePerS: P.wakeRate });
  say(`event feed: settle commit → reader p50 ${evWakeup.fromCommitMs.p50} ms, p99 ${evWakeup.fromCommitMs.p99} ms (${evWakeup.seen}/${evWakeup.events})`);
  const evReads = await feedReads(stack, { rounds: P.rounds, seconds: P.readS / P.rounds, connections: 16 });
  say(`event feed: pages of 100 ${evReads.feed.rps} req/s, policies?limit=100 ${evReads.policies.rps} req/s`);
  const evIdle = await idleFeedReaders(stack, { readers: P.feedReaders, windowMs: P.windowMs });
  say(`${P.feedReaders} idle feed readers: +${evIdle.extraRssMb} MB RSS, ${evIdle.queriesWhileIdle} queries while idle, all answered ${evIdle.allAnsweredAfterSubmitMs} ms after a submit`);
  r.events = { wakeup: evWakeup, reads: evReads, idle: evIdle };
  // Webhooks (issue 15): settlement → receiver, then fan-out with and without hanging endpoints.
  const whLatency = await webhookLatency(stack, { count: P.wake, ratePerS: P.wakeRate });
  say(`webhooks: settle commit → receiver p50 ${whLatency.fromCommitMs.p50} ms, p99 ${whLatency.fromCommitMs.p99} ms (${whLatency.delivered}/${whLatency.events})`);
  const whFanout = await webhookFanout(stack, { events: P.fanEvents, endpoints: P.fanEndpoints, hanging: P.fanHanging });
  say(
    `webhooks: fan-out ${P.fanEvents} events × ${P.fanEndpoints} endpoints ${whFanout.healthy.deliveriesPerS} deliveries/s, ` +
      `${whFanout.healthy.cpuMsPerDelivery.total} ms CPU each; healthy p99 ${whFanout.healthy.fromCommitMs.p99} ms, ` +
      `${whFanout.withHanging.fromCommitMs.p99} ms with ${P.fanHanging} hanging (${whFanout.healthyP99Ratio}×)`,
  );
  r.webhooks = { latency: whLatency, fanout: whFanout };
  // A noisy neighbour (issue 36): the quiet partner's health and webhook latency alone and during a flood.
  r.noisy = await noisyNeighbour(stack, { seconds: P.noisyS, floodRps: 45, ratePerS: P.wakeRate });
  say(
    `noisy neighbour: quiet partner's health p99 ${r.noisy.alone.healthMs.p99} → ${r.noisy.flooded.healthMs.p99} ms (${r.noisy.healthP99Ratio}×), ` +
      `webhook p99 ${r.noisy.alone.webhookFromCommitMs.p99} → ${r.noisy.flooded.webhookFromCommitMs.p99} ms (${r.noisy.webhookP99Ratio}×); flood ${JSON.stringify(r.noisy.floodStatuses)}`,
  );
  say(
    `noisy neighbour, validate flood (1 MB bodies, 8 in flight, 50/s): quiet partner's health p50 ${r.noisy.alone.healthMs.p50} → ${r.noisy.validateFlooded.healthMs.p50} ms ` +
      `(${r.noisy.validateHealthP50Ratio}×), p99 ${r.noisy.alone.healthMs.p99} → ${r.noisy.validateFlooded.healthMs.p99} ms (${r.noisy.validateHealthP99Ratio}×); flood ${JSON.stringify(r.noisy.validateFloodStatuses)}`,
  );
  // Every schema's owner behind a counting proxy (the waiters phase restarts them behind it).
  for (const s of schemaOwners()) {
    proxies[s] = new CountingPgProxy(s);
    await proxies[s].listen();
  }
  r.waiters = await manyWaiters(stack, { waiters: P.waiters, jobs: P.waiterJobs, windowMs: P.windowMs, proxies });
  say(
    `${P.waiters} waiters: +${r.waiters.extraRssMb} MB RSS, ${r.waiters.queriesWhileWaiting} queries while waiting, ` +
      `all answered ${r.waiters.settle.allAnsweredAfterFirstSettleMs} ms after the first settlement (${r.waiters.settle.ok} ok)`,
  );

  const table = buildTable(r, { judge: !smoke });
  // The event path by stage and the fan-out's PostgreSQL cost (issue 34).
  table.push(...eventPathRows(r, { judge: !smoke, all: false }));
  const results = { meta: { ...meta(), loadavgBefore: loadBefore }, table, ...r };
  process.stdout.write(`\n${renderTable(table)}\n\n`);
  printTimeline(r.timeline);
  const failures = table.filter((row) => row.pass === false).map((row) => row.metric);
  const errors = [
    ['submit sequential', r.submit.sequential.product.errors],
    ['submit 16', r.submit.c16.errors],
    ['submit 64', r.submit.c64.errors],
    ['clearance', r.clearance.sequential.withTaxId.errors + r.clearance.sequential.without.errors + r.clearance.c64.withTaxId.errors + r.clearance.c64.without.errors],
    ['health', r.health.product.errors],
    ['validate', r.validate.validate.errors],
    ['jobs read', r.jobsRead.errors],
    ['policies', r.policiesList.errors],
    ['events read', r.reads.events.product.errors],
    ['read floor', r.reads.jobs.floor.errors + r.reads.policies.floor.errors + r.reads.events.floor.errors],
    ['wake-up', r.wakeup.errors],
    ['webhooks', r.webhooks.latency.errors + r.webhooks.latency.missing + (r.webhooks.fanout.healthy.expected - r.webhooks.fanout.healthy.delivered)],
    ['event feed', r.events.wakeup.errors + r.events.wakeup.missing + r.events.reads.feed.errors + r.events.idle.errors],
    ['waiters', r.waiters.settle.errors + (r.waiters.waiters - r.waiters.settle.answered)],
    ['noisy neighbour (quiet partner)', r.noisy.alone.errors + r.noisy.alone.missing + r.noisy.flooded.errors + r.noisy.flooded.missing + r.noisy.validateFlooded.errors + r.noisy.validateFlooded.missing],
  ].filter(([, n]) => n > 0);
  results.errors = Object.fromEntries(errors);
  results.serviceErrors = stack.serviceErrors();
  results.serviceErrors.push(...readFloor.proc.errors.map((e) => `read-floor: ${e}`));
  for (const proc of Object.values(baselines.procs)) results.serviceErrors.push(...proc.errors.map((e) => `${proc.name}: ${e}`));
  if (results.serviceErrors.length) say(`the services logged ${results.serviceErrors.length} error line(s); see serviceErrors in the JSON`);
  const files = writeResults(results, smoke ? 'smoke' : 'bench');
  say(`results written to ${files.map((f) => f.replace(ROOT, '')).join(', ')}`);
  if (errors.length) say(`responses that failed their check: ${errors.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  if (!smoke) say(failures.length ? `targets missed: ${failures.join('; ')}` : 'all targets met');
}

/**
 * `--only events` (issue 34): the event path alone — settle → feed reader and settle → webhook
 * receiver by stage, the webhook fan-out, the 10,000 waiters — with the same rows and targets as the
 * full run's, in about three minutes.
 */
async function eventsOnly(loadBefore) {
  const gw = stack.gatewayUrl;
  await cannon({ url: gw, request: productSubmit(stack), check: checks.submitted, connections: 8, duration: P.warmS });
  say('warmed up');
  const r = {};
  const wakeup = await feedWakeup(stack, { count: P.wake, ratePerS: P.wakeRate });
  say(`event feed: settle commit → reader p50 ${wakeup.fromCommitMs.p50} ms, p99 ${wakeup.fromCommitMs.p99} ms (${wakeup.seen}/${wakeup.events})`);
  r.events = { wakeup };
  const latency = await webhookLatency(stack, { count: P.wake, ratePerS: P.wakeRate });
  say(`webhooks: settle commit → receiver p50 ${latency.fromCommitMs.p50} ms, p99 ${latency.fromCommitMs.p99} ms (${latency.delivered}/${latency.events})`);
  const fanout = await webhookFanout(stack, { events: P.fanEvents, endpoints: P.fanEndpoints, hanging: P.fanHanging });
  say(
    `webhooks: fan-out ${fanout.healthy.deliveriesPerS} deliveries/s, CPU per delivery ${JSON.stringify(fanout.healthy.cpuMsPerDelivery)} ms; ` +
      `healthy p99 ${fanout.withHanging.fromCommitMs.p99} ms with ${P.fanHanging} hanging (${fanout.healthyP99Ratio}×)`,
  );
  r.webhooks = { latency, fanout };
  for (const s of schemaOwners()) {
    proxies[s] = new CountingPgProxy(s);
    await proxies[s].listen();
  }
  r.waiters = await manyWaiters(stack, { waiters: P.waiters, jobs: P.waiterJobs, windowMs: P.windowMs, proxies });
  say(`${P.waiters} waiters: +${r.waiters.afterGc.extraRssMb} MB RSS after GC (+${r.waiters.extraRssMb} MB without), ${r.waiters.queriesWhileWaiting} queries while waiting`);
  const table = eventPathRows(r, { judge: !smoke, all: true });
  process.stdout.write(`\n${renderTable(table)}\n\n`);
  const results = { meta: { ...meta(), loadavgBefore: loadBefore, only: 'events' }, table, ...r, serviceErrors: stack.serviceErrors() };
  say(`results written to ${writeResults(results, 'events').map((f) => f.replace(ROOT, '')).join(', ')}`);
  const failures = table.filter((row) => row.pass === false).map((row) => row.metric);
  if (!smoke) say(failures.length ? `targets missed: ${failures.join('; ')}` : 'all targets met');
}

let code = 0;
try {
  await main();
} catch (err) {
  process.stderr.write(`✖ bench failed: ${err.stack ?? err}\n`);
  code = 1;
} finally {
  say('cleaning up (processes, database, NATS streams)');
  const problems = await cleanup();
  if (problems.length) code = code || 1;
  await sleep(0);
}
say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(code);

/** The sequential submit's timeline by stage (mean and p50 ms), when the phase recorded one. */
function printTimeline(t) {
  if (!t.n) return;
  process.stdout.write('Where a sequential submit-with-wait spends its time (mean / p50 ms):\n');
  for (const [k, v] of Object.entries(t.stages)) process.stdout.write(`  ${String(v.mean).padStart(7)} ${String(v.p50).padStart(7)}  ${k}\n`);
  process.stdout.write('\n');
}
