// The read path against its floor (issue 34): GET /v1/jobs/{id} (a settled job), GET
// /v1/policies?limit=50 and GET /v1/events?limit=100, each at 16 connections, the product and the read
// floor (bench/baselines/read-floor.mjs: the gateway's token check and cache, the service's SQL on one
// pg pool, JSON.stringify) in alternating slices of the same run, with the CPU time per request of
// every process involved: the gateway, the one service the read reaches, and their PostgreSQL backends
// (application_name = the service), against the floor process and its own backends.
import { ROOT, cpuDuring, freePorts, sleep, spawnNode, waitReady } from './stack.mjs';
import { cannon, interleave } from './load.mjs';
import { checks, productHeaders, productSubmit, settledJobId } from './phases.mjs';

/** Starts the read floor next to the bench stack. */
export async function startReadFloor(stack) {
  const [port] = await freePorts(1);
  const proc = stack.track(
    spawnNode('read-floor', `${ROOT}bench/baselines/read-floor.mjs`, {
      env: {
        LOG_LEVEL: 'warn',
        PORT: String(port),
        DATABASE_URL: stack.databaseUrl,
        DB_POOL_MAX: stack.env.DB_POOL_MAX ?? '10',
        JWKS_URL: `${stack.issuer}/.well-known/jwks.json`,
        ISSUER: stack.issuer,
        AUDIENCE: 'partner-submission-api',
      },
    }),
  );
  await waitReady(proc, `http://127.0.0.1:${port}/readyz`);
  return { proc, url: `http://127.0.0.1:${port}` };
}

const page = (n) => (status, body) => {
  try {
    return status === 200 && JSON.parse(body).items.length === n;
  } catch {
    return false;
  }
};

/** At least n events in the bench partner's feed: submissions (each settles into an event) until there are. */
export async function ensureEvents(stack, n) {
  const count = async () =>
    Number((await stack.sql('SELECT count(*) AS n FROM events.events WHERE tenant_id = $1 AND partner_id = $2', [stack.tenant, stack.partnerId]))[0].n);
  const have = await count();
  if (have >= n) return have;
  await cannon({ url: stack.gatewayUrl, request: productSubmit(stack), check: checks.submitted, connections: 8, amount: n - have + 10 });
  for (let i = 0; i < 300; i++) {
    const now = await count();
    if (now >= n) return now;
    await sleep(100);
  }
  throw new Error(`the feed holds ${await count()} events, fewer than ${n}`);
}

/**
 * The plan of the events service's page statement (services/events/src/feed.ts readPage) for the
 * first 100 events of the bench partner: EXPLAIN (ANALYZE, BUFFERS) of the very text, run 20 times
 * first so that the figures are those of a warm cache.
 */
export async function explainEventsPage(stack) {
  const { readFileSync } = await import('node:fs');
  const src = readFileSync(`${ROOT}services/events/dist/feed.js`, 'utf8');
  const text = /`(WITH page AS \([\s\S]*?ORDER BY page\.partner_seq)`/.exec(src)?.[1];
  if (!text) return { error: 'the page statement was not found in services/events/dist/feed.js' };
  const sql = text.replace(/\bFROM events\b/, 'FROM events.events').replace(/\bJOIN feed_heads\b/, 'JOIN events.feed_heads');
  const params = [stack.tenant, stack.partnerId, '0', [], 100];
  for (let i = 0; i < 20; i++) await stack.sql(sql, params);
  const [row] = await stack.sql(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
  const plan = row['QUERY PLAN'][0];
  const nodes = [];
  const walk = (n, depth) => {
    nodes.push(`${'  '.repeat(depth)}${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''} (rows ${n['Actual Rows']}, ${n['Actual Total Time']} ms)`);
    for (const c of n.Plans ?? []) walk(c, depth + 1);
  };
  walk(plan.Plan, 0);
  return { planningMs: plan['Planning Time'], executionMs: plan['Execution Time'], sharedHitBlocks: plan.Plan['Shared Hit Blocks'], nodes };
}

/** The three reads, product beside floor, at `connections`; each read's {floor, product} with CPU per request. */
export async function readPhases(stack, floor, { rounds, seconds, warmS, connections = 16 }) {
  await ensureEvents(stack, 101);
  const explain = await explainEventsPage(stack);
  const jobId = await settledJobId(stack);
  const headers = productHeaders(stack);
  const reads = [
    { name: 'jobs', service: 'job', request: { path: `/v1/jobs/${jobId}`, headers }, check: checks.jobSucceeded },
    { name: 'policies', service: 'policy', request: { path: '/v1/policies?limit=50', headers }, check: checks.policies50 },
    { name: 'events', service: 'events', request: { path: '/v1/events?limit=100', headers }, check: page(100) },
  ];
  const out = {};
  for (const r of reads) {
    const productCpu = (fn) =>
      cpuDuring(stack, { procs: { gateway: stack.procs.get('gateway'), [r.service]: stack.procs.get(r.service) }, pgApps: [r.service] }, fn);
    const floorCpu = (fn) => cpuDuring(stack, { procs: { 'read-floor': floor.proc }, pgApps: ['read-floor'] }, fn);
    for (const url of [floor.url, stack.gatewayUrl]) await cannon({ url, request: r.request, check: r.check, connections, duration: warmS });
    out[r.name] = await interleave(
      [
        { name: 'floor', url: floor.url, request: r.request, check: r.check, measure: floorCpu },
        { name: 'product', url: stack.gatewayUrl, request: r.request, check: r.check, measure: productCpu },
      ],
      { rounds, seconds: seconds / rounds, connections },
    );
  }
  out.events.explain = explain;
  return out;
}

/** The figures of readPhases as table rows (report.mjs's add). */
export function readRows(reads, add) {
  const F = 'read floor';
  const targets = {
    jobs: { rps: 0.5, cpu: 2 },
    policies: { rps: 0.7, cpu: 1.5 },
    events: { rps: 0.7, cpu: 1.5 },
  };
  const labels = { jobs: 'GET /v1/jobs/{id} settled', policies: 'GET /v1/policies?limit=50', events: 'GET /v1/events?limit=100' };
  for (const [name, t] of Object.entries(targets)) {
    const r = reads[name];
    if (!r) continue;
    const label = labels[name];
    add(`${label} 16 conns throughput`, r.product.rps, 'req/s', r.floor.rps, F, { text: `≥ ${t.rps}× read floor`, check: (x) => x !== null && x >= t.rps });
    add(`${label} CPU/request (gateway + service + PG)`, r.product.cpuMsPerRequest?.total, 'ms', r.floor.cpuMsPerRequest?.total, F, {
      text: `≤ ${t.cpu}× read floor`,
      check: (x) => x !== null && x <= t.cpu,
    });
    const p = r.product.cpuMsPerRequest ?? {};
    const f = r.floor.cpuMsPerRequest ?? {};
    add(`${label} CPU/request: gateway (floor: its one process)`, p.gateway, 'ms', f['read-floor'], F);
    for (const k of Object.keys(p).filter((k) => !['gateway', 'postgres', 'total'].includes(k))) add(`${label} CPU/request: ${k} service`, p[k], 'ms', null, null);
    add(`${label} CPU/request: PostgreSQL (floor: its backends)`, p.postgres, 'ms', f.postgres, F);
    add(`${label} p50`, r.product.latencyMs.p50, 'ms', r.floor.latencyMs.p50, F);
    add(`${label} p99`, r.product.latencyMs.p99, 'ms', r.floor.latencyMs.p99, F);
  }
}
