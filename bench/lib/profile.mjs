// `npm run bench -- --profile`: where a submit-with-wait request spends its time, per process.
// The stack runs with `node --cpu-prof` on every process of the registry and with every schema's
// owner behind a counting proxy. After a warm-up: P.seq sequential submit-with-wait requests (database round trips
// per request, per service), then submit-with-wait at 16 connections. The services are then stopped
// (SIGTERM: they exit and write their profiles), and each profile is cut to the measured window and
// summarised: CPU ms per request, self and inclusive time by package, the hottest functions.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './stack.mjs';
import { cannon, round, wallNow, calibrateClock } from './load.mjs';
import { CountingPgProxy } from './pgproxy.mjs';
import { checks, natsTap, productHeaders, productSubmit, timeline } from './phases.mjs';
import { processNames, schemaOwners } from '../../scripts/lib/processes.mjs';

const SERVICES = processNames();
const DB_SERVICES = schemaOwners();

/** Package (or service, or V8 pseudo-frame) a call frame belongs to. */
function categoryOf(frame) {
  const url = frame.url ?? '';
  if (!url) {
    if (['(idle)', '(garbage collector)', '(program)', '(root)'].includes(frame.functionName)) return frame.functionName;
    return 'native';
  }
  const nm = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm) return nm[1];
  const svc = /\/services\/([^/]+)\/dist\//.exec(url);
  if (svc) return `service code (${svc[1]})`;
  if (url.startsWith('node:')) return 'node core';
  return 'other';
}

function analyse(file, window) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Sample times are on V8's monotonic clock (µs); map the window (wall-clock ms) onto it through the
  // profile's end, which is the process's exit.
  const toProfile = (wallMs) => prof.endTime - (window.exitWall - wallMs) * 1000;
  const from = toProfile(window.from);
  const to = toProfile(window.to);
  const self = new Map();
  const inclusive = new Map();
  const fnSelf = new Map();
  const fnIncl = new Map();
  let t = prof.startTime;
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i];
    if (t < from || t > to) continue;
    const dt = (prof.timeDeltas[i + 1] ?? 0) / 1000;
    if (dt <= 0) continue;
    total += dt;
    const leaf = nodes.get(prof.samples[i]);
    const cat = categoryOf(leaf.callFrame);
    self.set(cat, (self.get(cat) ?? 0) + dt);
    const fnKey = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules|services)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
    fnSelf.set(fnKey(leaf), (fnSelf.get(fnKey(leaf)) ?? 0) + dt);
    const seenCat = new Set();
    const seenFn = new Set();
    for (let id = leaf.id; id !== undefined; id = parent.get(id)) {
      const n = nodes.get(id);
      const c = categoryOf(n.callFrame);
      if (!['(root)', 'node core', 'native', 'other'].includes(c) && !seenCat.has(c)) {
        seenCat.add(c);
        inclusive.set(c, (inclusive.get(c) ?? 0) + dt);
      }
      if (n.callFrame.url && !n.callFrame.url.startsWith('node:')) {
        const k = fnKey(n);
        if (!seenFn.has(k)) {
          seenFn.add(k);
          fnIncl.set(k, (fnIncl.get(k) ?? 0) + dt);
        }
      }
    }
  }
  const idle = self.get('(idle)') ?? 0;
  const busy = total - idle;
  const top = (m, n) =>
    [...m.entries()]
      .filter(([k]) => k !== '(idle)' && !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => ({ name: k, ms: round(v, 1), pctOfBusy: round((100 * v) / busy, 1) }));
  return { windowMs: round(total, 0), busyMs: round(busy, 0), busyPct: round((100 * busy) / total, 1), selfByPackage: top(self, 14), inclusiveByPackage: top(inclusive, 14), topSelfFunctions: top(fnSelf, 15), topInclusiveFunctions: top(fnIncl, 25) };
}

/** Makes proc write a heap snapshot (--heapsnapshot-signal=SIGUSR2; a full GC first) and waits for it. */
async function heapSnapshot(proc, dir, livezUrl) {
  const before = new Set(readdirSync(dir));
  process.kill(proc.pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(100);
    const fresh = readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    // The process writes the snapshot on its main thread: once it answers again, the file is complete.
    if (fresh.length && (await fetch(livezUrl).then((r) => r.ok, () => false))) return join(dir, fresh[0]);
  }
  throw new Error('heap snapshot not written');
}

/**
 * Live objects of a heap snapshot by kind (object constructor, closure name, string, …): count, bytes.
 * The snapshot file (tens of MB) is deleted once counted.
 */
function heapCensus(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  rmSync(file, { force: true });
  const f = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((k) => f.indexOf(k));
  const census = new Map();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += f.length) {
    const type = types[snap.nodes[i + iType]];
    const size = snap.nodes[i + iSize];
    total += size;
    const name = ['object', 'closure', 'native'].includes(type) ? `${type} ${snap.strings[snap.nodes[i + iName]]}` : `(${type})`;
    const e = census.get(name) ?? { count: 0, bytes: 0 };
    e.count++;
    e.bytes += size;
    census.set(name, e);
  }
  return { total, census };
}

/** N waiters on a gateway, the heap census before and while they wait: what one waiter costs. */
async function waiterHeap(stack, { waiters, jobs, dir, say, exits }) {
  const { request, agents } = await import('./http.mjs');
  const { submissionBody } = await import('./phases.mjs');
  await stack.stopService('worker');
  exits.worker = wallNow(); // its profile ends here; the worker started later is not profiled
  const gateway = stack.procs.get('gateway');
  const livez = `http://127.0.0.1:${stack.ports.ops.gateway}/livez`;
  const headers = { authorization: `Bearer ${stack.token}` };
  const [agent] = agents(1);
  const ids = [];
  for (let i = 0; i < jobs; i++) {
    const r = await request(`${stack.gatewayUrl}/v1/submissions`, { method: 'POST', headers, body: submissionBody(stack.productId), agent });
    ids.push(r.body.id);
  }
  for (let i = 0; i < 300; i++) await request(`${stack.gatewayUrl}/v1/jobs/${ids[i % jobs]}`, { headers, agent });
  const a = heapCensus(await heapSnapshot(gateway, dir, livez));
  const pool = agents(4);
  const pending = [];
  for (let i = 0; i < waiters; i++) {
    pending.push(request(`${stack.gatewayUrl}/v1/jobs/${ids[i % jobs]}`, { headers: { ...headers, prefer: 'wait=30' }, agent: pool[i % 4] }).catch(() => undefined));
    if (i % 200 === 199) await sleep(50);
  }
  const metrics = `http://127.0.0.1:${stack.ports.ops.gateway}/metrics`;
  const waitingNow = async () => Number(/^partner_gateway_waiting_requests(?:\{[^}]*\})? (\S+)$/m.exec(await (await fetch(metrics)).text())?.[1] ?? NaN);
  let registered = 0;
  for (let i = 0; i < 300 && registered < waiters; i++) {
    await sleep(100);
    registered = await waitingNow();
  }
  await sleep(1_000);
  const b = heapCensus(await heapSnapshot(gateway, dir, livez));
  registered = await waitingNow();
  say(`heap census of ${waiters} waiters taken; releasing them`);
  await stack.startService('worker');
  await Promise.all(pending);
  agent.destroy();
  for (const x of pool) x.destroy();
  const rows = [];
  for (const [name, e] of b.census) {
    const was = a.census.get(name) ?? { count: 0, bytes: 0 };
    const bytes = e.bytes - was.bytes;
    if (bytes > 0) rows.push({ name, perWaiterCount: round((e.count - was.count) / registered, 2), perWaiterBytes: round(bytes / registered, 0) });
  }
  rows.sort((x, y) => y.perWaiterBytes - x.perWaiterBytes);
  return {
    waiters,
    registeredAtSnapshot: registered,
    liveHeapMb: { before: round(a.total / 1048576, 1), held: round(b.total / 1048576, 1) },
    liveHeapBytesPerWaiter: round((b.total - a.total) / registered, 0),
    top: rows.slice(0, 25),
  };
}

/**
 * Windows "read jobs", "read policies", "read events" (issue 34): GET /v1/jobs/{id} of a settled job,
 * GET /v1/policies?limit=50 and GET /v1/events?limit=100, each at 16 connections for P.readS * 2 s.
 */
async function readWindows(stack, { P, windows }) {
  const { ensureEvents } = await import('./reads.mjs');
  const { settledJobId } = await import('./phases.mjs');
  await ensureEvents(stack, 101);
  const jobId = await settledJobId(stack);
  const headers = productHeaders(stack);
  const page100 = (status, body) => status === 200 && JSON.parse(body).items?.length === 100;
  const out = {};
  for (const [name, request, check] of [
    ['read jobs', { path: `/v1/jobs/${jobId}`, headers }, checks.jobSucceeded],
    ['read policies', { path: '/v1/policies?limit=50', headers }, checks.policies50],
    ['read events', { path: '/v1/events?limit=100', headers }, page100],
  ]) {
    await cannon({ url: stack.gatewayUrl, request, check, connections: 16, duration: P.warmS });
    await sleep(500);
    const from = wallNow();
    const r = await cannon({ url: stack.gatewayUrl, request, check, connections: 16, duration: P.readS * 2 });
    windows[name] = { from, to: wallNow(), requests: r.ok };
    out[name] = { ok: r.ok, errors: r.errors, rps: r.rps, latencyMs: r.latencyMs };
    await sleep(500);
  }
  return out;
}

const PROFILE_NOTE =
  'V8 sampling profiles (node --cpu-prof, 1 ms), cut to each window; busy = samples not idle. On a machine shared with other work a sample ' +
  'can land while the process is descheduled, so busy ms overstate CPU ms — read the shares, and take CPU ms/request from the main run. ' +
  'Services reach PostgreSQL through counting proxies (a little latency, no CPU in the services).';

/** Every process's profile cut to every window. */
function analyseAll(dir, windows, exits) {
  const files = readdirSync(dir);
  const processes = {};
  for (const s of SERVICES) {
    const f = files.find((x) => x.startsWith(`${s}.cpuprofile`));
    processes[s] = {};
    for (const [w, win] of Object.entries(windows)) {
      if (!f) {
        processes[s][w] = { error: 'no profile written' };
        continue;
      }
      const a = analyse(join(dir, f), { from: win.from, to: win.to, exitWall: exits[s] });
      processes[s][w] = { busyMsPerRequest: round(a.busyMs / win.requests, 3), ...a };
    }
  }
  return processes;
}

function printWindows(windows, processes) {
  for (const [w, win] of Object.entries(windows)) {
    const lines = Object.entries(processes)
      .map(([s, byWindow]) => {
        const p = byWindow[w];
        return `  ${s.padEnd(10)} ${String(p.busyMsPerRequest).padStart(6)} ms/request  busy ${p.busyPct}%  top: ${(p.inclusiveByPackage ?? [])
          .slice(0, 4)
          .map((x) => `${x.name} ${x.pctOfBusy}%`)
          .join(', ')}`;
      })
      .join('\n');
    process.stdout.write(`\nWindow "${w}" (${win.requests} requests): on-CPU time per request by process (sampled)\n${lines}\n`);
  }
}

export async function runProfile(stack, { P, say, proxies, only }) {
  const dir = mkdtempSync(join(tmpdir(), 'partner-bench-prof-'));
  for (const s of DB_SERVICES) {
    proxies[s] = new CountingPgProxy(s);
    await proxies[s].listen();
  }
  await stack.start({
    onStep: say,
    policies: P.policies,
    nodeArgsOf: (s) => [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      `--cpu-prof-name=${s}.cpuprofile`,
      ...(s === 'gateway' ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`] : []),
    ],
    envOf: (s) => (DB_SERVICES.includes(s) ? { DATABASE_URL: stack.databaseUrlVia(proxies[s].port) } : {}),
  });
  if (only === 'reads') {
    // The read windows alone (issue 34), then every process stopped and its profile cut to them.
    calibrateClock();
    const windows = {};
    const reads = await readWindows(stack, { P, windows });
    const exits = {};
    for (const s of [...SERVICES].reverse()) {
      await stack.procs.get(s).stop();
      exits[s] = wallNow();
      stack.procs.delete(s);
    }
    const processes = analyseAll(dir, windows, exits);
    printWindows(windows, processes);
    return { note: PROFILE_NOTE, windows, reads, processes, profileDir: dir };
  }
  const gw = stack.gatewayUrl;
  const health = { path: '/v1/health', headers: productHeaders(stack) };
  const policies = { path: '/v1/policies?limit=50', headers: productHeaders(stack) };
  await cannon({ url: gw, request: productSubmit(stack), check: checks.submitted, connections: 8, duration: P.warmS });
  await cannon({ url: gw, request: health, check: checks.health, connections: 8, duration: P.warmS });
  await cannon({ url: gw, request: policies, check: checks.policies50, connections: 8, duration: P.warmS });
  await sleep(1_000);
  say('warmed up; profiling');
  calibrateClock();
  const windows = {};
  const tap = await natsTap(stack);

  // Window "submit": P.seq sequential requests (database round trips per request, per service —
  // the proxies count exactly), then 16 connections.
  const before = Object.fromEntries(DB_SERVICES.map((s) => [s, proxies[s].snapshot()]));
  let from = wallNow();
  const records = [];
  const seq = await cannon({
    url: gw,
    request: productSubmit(stack),
    check: checks.submitted,
    connections: 1,
    amount: P.seq,
    onRecord: (context, status, body) => records.push({ key: context.key, sentAt: context.sentAt, endedAt: wallNow(), ok: checks.submitted(status, body) }),
  });
  await sleep(300); // the fast path's outbox DELETE runs after the answer
  await tap.close();
  const after = Object.fromEntries(DB_SERVICES.map((s) => [s, proxies[s].snapshot()]));
  const perRequest = Object.fromEntries(
    DB_SERVICES.map((s) => [
      s,
      {
        roundTrips: round((after[s].roundTrips - before[s].roundTrips) / seq.ok, 2),
        statements: round((after[s].statements - before[s].statements) / seq.ok, 2),
      },
    ]),
  );
  const c16 = await cannon({ url: gw, request: productSubmit(stack), check: checks.submitted, connections: 16, duration: P.concS });
  windows.submit = { from, to: wallNow(), requests: seq.ok + c16.ok };
  const tl = await timeline(stack, records, tap);
  await sleep(1_000);

  // Window "health" (50 connections) and window "policies" (GET /v1/policies?limit=50, 16 connections).
  from = wallNow();
  const h = await cannon({ url: gw, request: health, check: checks.health, connections: 50, duration: P.healthS });
  windows.health = { from, to: wallNow(), requests: h.ok };
  await sleep(1_000);
  from = wallNow();
  const pol = await cannon({ url: gw, request: policies, check: checks.policies50, connections: 16, duration: P.readS });
  windows.policies = { from, to: wallNow(), requests: pol.ok };
  await sleep(1_000);
  const reads = await readWindows(stack, { P, windows });

  // Memory of waiting requests: heap census before and while N requests wait (no CPU window).
  const exits = {};
  const heap = await waiterHeap(stack, { waiters: P.heapWaiters, jobs: 20, dir, say, exits });

  // Stop (profiles are written at exit) and remember when each process exited.
  for (const s of [...SERVICES].reverse()) {
    await stack.procs.get(s).stop();
    exits[s] ??= wallNow();
    stack.procs.delete(s);
  }
  const processes = analyseAll(dir, windows, exits);
  say(`profiles of ${SERVICES.length} processes analysed`);
  printWindows(windows, processes);
  process.stdout.write(`\nDatabase round trips per submit-with-wait request:\n${Object.entries(perRequest).map(([s, v]) => `  ${s.padEnd(10)} ${v.roundTrips} round trips, ${v.statements} statements`).join('\n')}\n\n`);
  return {
    note: PROFILE_NOTE,
    reads,
    windows,
    submit: { sequential: { ok: seq.ok, errors: seq.errors, latencyMs: seq.latencyMs }, c16: { ok: c16.ok, errors: c16.errors, rps: c16.rps, latencyMs: c16.latencyMs } },
    health: { ok: h.ok, rps: h.rps, latencyMs: h.latencyMs },
    policies: { ok: pol.ok, rps: pol.rps, latencyMs: pol.latencyMs },
    dbRoundTripsPerRequest: perRequest,
    waiterHeap: heap,
    timeline: tl,
    processes,
    profileDir: dir, // the .cpuprofile files stay here: open them in Chrome DevTools (Performance tab)
  };
}
