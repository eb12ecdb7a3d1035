// The waiters phase of `npm run bench`: what N requests waiting on their jobs cost one gateway (memory,
// database queries while they wait) and how fast they are all answered once the jobs settle.
import { ROOT, connectWithRetry, memoryOf, sleep } from './stack.mjs';
import { round, summarize, wallNow, calibrateClock } from './load.mjs';
import { agents, request } from './http.mjs';
import { productHeaders, submissionBody } from './phases.mjs';
import { schemaOwners } from '../../scripts/lib/processes.mjs';

const gauge = async (opsUrl, name) => {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
};
const waitingGauge = (opsUrl) => gauge(opsUrl, 'partner_gateway_waiting_requests');
const heapOf = async (opsUrl) => ({
  heapUsedMb: round((await gauge(opsUrl, 'nodejs_heap_size_used_bytes')) / 1048576, 1),
  heapTotalMb: round((await gauge(opsUrl, 'nodejs_heap_size_total_bytes')) / 1048576, 1),
  externalMb: round((await gauge(opsUrl, 'nodejs_external_memory_bytes')) / 1048576, 1),
});

/** One sample of the database's transaction counters, on a connection of its own (closed after). */
async function pgSample(url) {
  const c = await connectWithRetry(url);
  try {
    const r = await c.query(
      `SELECT xact_commit + xact_rollback AS xacts, pg_backend_pid() AS pid FROM pg_stat_database WHERE datname = current_database()`,
    );
    return { xacts: Number(r.rows[0].xacts), pid: r.rows[0].pid };
  } finally {
    await c.end();
  }
}

async function backendsActiveSince(url, sinceWallMs, excludePids) {
  const c = await connectWithRetry(url);
  try {
    const r = await c.query(
      `SELECT pid, application_name, state, query_start, left(query, 80) AS query FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND NOT (pid = ANY($2::int[])) AND application_name NOT IN ('bench', 'bench-analyze')
          AND query_start >= to_timestamp($1::double precision / 1000)`,
      [sinceWallMs, excludePids],
    );
    return r.rows;
  } finally {
    await c.end();
  }
}

/**
 * N waiters held by one fresh gateway. The database services are restarted behind counting proxies
 * (the job service with its relay and sweeps effectively off), the worker is stopped, K jobs are
 * submitted (they stay queued), then N GET /v1/jobs/{id} with Prefer: wait=30 are opened (N/K per
 * job). Once the gateway's waiting gauge shows all N: the gateway's extra RSS, then a quiet window in
 * which every database query of every service is counted (proxies; cross-checked with
 * pg_stat_activity and pg_stat_database), then the worker starts and settles the K jobs, and the time
 * until every waiter has its answer is measured.
 */
export async function manyWaiters(stack, { waiters, jobs, windowMs, proxies }) {
  calibrateClock();
  const log = [];
  // 1. Quiet services behind counting proxies; no worker; a fresh gateway.
  for (const s of ['gateway', 'worker']) await stack.stopService(s);
  const proxied = schemaOwners();
  for (const s of proxied) await stack.stopService(s);
  // Periodic housekeeping is not the waiters' cost: the relays and sweeps (the events service's
  // once-a-minute retention sweep among them) are pushed past the window.
  const quiet = { OUTBOX_RELAY_INTERVAL_MS: '60000', SWEEP_INTERVAL_MS: '3600000', EVENT_SWEEP_INTERVAL_MS: '3600000' };
  await Promise.all(
    proxied.map((s) =>
      stack.startService(s, {
        env: {
          DATABASE_URL: stack.databaseUrlVia(proxies[s].port),
          // The policy service has an event outbox relay too (product.requirements_changed): quiet it alone.
          ...(s === 'auth' ? {} : s === 'policy' ? { OUTBOX_RELAY_INTERVAL_MS: quiet.OUTBOX_RELAY_INTERVAL_MS } : quiet),
        },
      }),
    ),
  );
  // The webhook dispatcher's own outbox relay (webhook_endpoint.disabled events) polls like the others: quiet it too.
  await stack.stopService('dispatcher');
  await stack.startService('dispatcher', { env: quiet });
  // The gateway can be told to collect its garbage (SIGUSR2, bench/lib/gc-on-signal.cjs), so that its
  // memory is read as the live cost of the waiters.
  const gateway = await stack.startService('gateway', {
    env: { MAX_WAITERS: String(Math.max(20_000, waiters + 1_000)) },
    // BENCH_WAITERS_NODE_ARGS: V8 settings to compare (e.g. "--max-semi-space-size=2"), bench only.
    nodeArgs: ['--expose-gc', '--require', `${ROOT}bench/lib/gc-on-signal.cjs`, ...(process.env.BENCH_WAITERS_NODE_ARGS ?? '').split(' ').filter(Boolean)],
  });
  const collected = async () => {
    process.kill(gateway.pid, 'SIGUSR2');
    await sleep(300);
    return { mem: memoryOf(gateway.pid), heap: await heapOf(opsUrl) };
  };
  const opsUrl = `http://127.0.0.1:${stack.ports.ops.gateway}`;
  log.push('services restarted behind counting proxies (the dispatcher with a quiet relay); worker stopped; fresh gateway');

  const [agent0] = agents(1);
  const headers = productHeaders(stack, { principal: false });
  // 2. K jobs, queued but not worked.
  const ids = [];
  for (let i = 0; i < jobs; i++) {
    const r = await request(`${stack.gatewayUrl}/v1/submissions`, { method: 'POST', headers, body: submissionBody(stack.productId), agent: agent0 });
    if (r.status !== 202) throw new Error(`POST /v1/submissions answered ${r.status}: ${r.text}`);
    ids.push(r.body.id);
  }
  // Warm the fresh gateway on the very route the waiters use (JIT, gRPC channel), then take its
  // resting memory, so the figure is what the waiters themselves cost.
  for (let i = 0; i < 400; i++) {
    await request(`${stack.gatewayUrl}/v1/jobs/${ids[i % ids.length]}`, { headers, agent: agent0 });
    await request(`${stack.gatewayUrl}/v1/health`, { headers, agent: agent0 });
  }
  agent0.destroy();
  await sleep(1_000);
  const before = memoryOf(gateway.pid);
  const heapBefore = await heapOf(opsUrl);
  const gcBefore = await collected();

  // 3. N waiters, opened with at most 200 connections being set up at once; waiter i waits on job
  //    floor(i / (N/K)), so the jobs of the first waiters (whose 30 s run out first) settle first.
  const pool = agents(4);
  const answers = [];
  let connecting = 0;
  let opened = 0;
  const pending = [];
  const regStart = Date.now();
  const slot = () => new Promise((resolve) => (connecting < 200 ? resolve() : setTimeout(() => resolve(slot()), 2)));
  for (let i = 0; i < waiters; i++) {
    await slot();
    connecting++;
    const id = ids[Math.floor((i * ids.length) / waiters)];
    pending.push(
      request(`${stack.gatewayUrl}/v1/jobs/${id}`, {
        headers: { ...headers, prefer: 'wait=30' },
        agent: pool[i % pool.length],
        onSocketConnected: () => {
          connecting--;
          opened++;
        },
      }).then(
        (res) =>
          answers.push({
            id,
            status: res.status,
            ok: res.status === 200 && res.body?.status === 'succeeded',
            endedAt: res.endedAt,
            ...(res.status === 200 && res.body?.status === 'succeeded' ? {} : { text: res.text.slice(0, 200) }),
          }),
        (err) => answers.push({ id, ok: false, error: err.message }),
      ),
    );
  }
  let registered = 0;
  for (let i = 0; i < 600; i++) {
    registered = await waitingGauge(opsUrl);
    if (registered + answers.length >= waiters) break;
    await sleep(100);
  }
  const registeredAfterMs = Date.now() - regStart;
  if (registered < waiters) log.push(`only ${registered} of ${waiters} waiters registered (${answers.length} answered early)`);
  const held = memoryOf(gateway.pid);
  const heapHeld = await heapOf(opsUrl);
  const gcHeld = await collected();

  // 4. Quiet window: nothing may reach the database while the waiters wait.
  await sleep(2_000); // the last registrations' job reads finish
  const latestEnd = regStart + 25_000; // the first waiters give up 30 s after they registered
  const windowLen = Math.max(500, Math.min(windowMs, latestEnd - Date.now() - 1_500));
  const proxyBefore = Object.fromEntries(Object.entries(proxies).map(([k, p]) => [k, p.snapshot()]));
  const t0 = wallNow();
  const a = await pgSample(stack.databaseUrl);
  await sleep(windowLen);
  const proxyAfter = Object.fromEntries(Object.entries(proxies).map(([k, p]) => [k, p.snapshot()]));
  const t1 = wallNow();
  const active = await backendsActiveSince(stack.databaseUrl, t0, [a.pid]);
  const b = await pgSample(stack.databaseUrl);
  const heldEnd = memoryOf(gateway.pid);
  const waitingEnd = await waitingGauge(opsUrl);
  const queriesByService = Object.fromEntries(
    Object.keys(proxies).map((k) => [k, proxyAfter[k].statements - proxyBefore[k].statements]),
  );
  const queries = Object.values(queriesByService).reduce((x, y) => x + y, 0);

  // 5. Settle: start the worker; every waiter must get its 200 with the settled job.
  // One worker slot per job, so what is timed is the gateway answering, not a queue of jobs.
  const workerStart = wallNow();
  await stack.startService('worker', { env: { WORKER_CONCURRENCY: String(Math.max(16, jobs)) } });
  const all = await Promise.race([Promise.all(pending), sleep(40_000).then(() => 'timeout')]);
  const lastEnd = Math.max(...answers.map((r) => r.endedAt ?? 0));
  for (const a2 of pool) a2.destroy();
  const rows = await stack.sql('SELECT job_id, extract(epoch FROM settled_at) * 1000 AS settled_ms FROM job.jobs WHERE job_id = ANY($1)', [ids]);
  const settledAt = new Map(rows.map((r) => [r.job_id, Number(r.settled_ms)]));
  const settledTimes = [...settledAt.values()].filter(Number.isFinite);
  const firstSettled = Math.min(...settledTimes);
  const lastSettled = Math.max(...settledTimes);
  const ok = answers.filter((r) => r.ok);
  const perWaiter = ok.filter((r) => settledAt.has(r.id)).map((r) => r.endedAt - settledAt.get(r.id));
  const mb = (x) => round(x / 1024 / 1024, 1);
  return {
    waiters,
    jobs,
    opened,
    registered,
    registeredAfterMs,
    registrationsPerS: round((registered * 1000) / registeredAfterMs, 0),
    waitingAtWindowEnd: waitingEnd,
    gatewayRssMb: { before: mb(before.rss), held: mb(held.rss), heldAtWindowEnd: mb(heldEnd.rss), peak: mb(heldEnd.hwm) },
    extraRssMb: mb(Math.max(held.rss, heldEnd.rss) - before.rss),
    extraRssKbPerWaiter: round((Math.max(held.rss, heldEnd.rss) - before.rss) / 1024 / waiters, 1),
    gatewayHeap: { before: heapBefore, held: heapHeld },
    // After a forced full GC (the measure): the live cost of the waiters.
    afterGc: {
      rssMb: { before: mb(gcBefore.mem.rss), held: mb(gcHeld.mem.rss) },
      extraRssMb: mb(gcHeld.mem.rss - gcBefore.mem.rss),
      heapUsedMb: { before: gcBefore.heap.heapUsedMb, held: gcHeld.heap.heapUsedMb },
      heapKbPerWaiter: round(((gcHeld.heap.heapUsedMb - gcBefore.heap.heapUsedMb) * 1024) / Math.max(1, registered), 2),
    },
    quietWindowMs: round(t1 - t0, 0),
    queriesWhileWaiting: queries,
    queriesByService,
    pgStatActivityBackendsActiveInWindow: active.length,
    pgStatActivityActive: active.slice(0, 5),
    pgStatDatabaseXactDelta: b.xacts - a.xacts - 1,
    pgStatDatabaseNote:
      'xact delta minus the sampler’s own; PostgreSQL 15 flushes other backends’ counters up to 10 s late, so this can include registration-time reads — the proxies’ count is exact',
    settle: {
      timedOut: all === 'timeout',
      answered: answers.length,
      ok: ok.length,
      errors: answers.length - ok.length,
      errorSamples: answers.filter((x) => !x.ok).slice(0, 3),
      workerStartToFirstSettleMs: round(firstSettled - workerStart, 1),
      settleSpreadMs: round(lastSettled - firstSettled, 1),
      allAnsweredAfterFirstSettleMs: round(lastEnd - firstSettled, 1),
      allAnsweredAfterLastSettleMs: round(lastEnd - lastSettled, 1),
      perWaiterFromSettleMs: summarize(perWaiter),
    },
    log,
  };
}
