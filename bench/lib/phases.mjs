// The measurements of `npm run bench`, one function per section of the results (the waiters phase in
// waiters.mjs, the event and webhook phases in events.mjs and webhooks.mjs).
import { randomUUID, randomBytes } from 'node:crypto';
import { connect, DiscardPolicy, RetentionPolicy, StorageType, nanos } from 'nats';
import { ROOT, connectWithRetry, sleep } from './stack.mjs';
import { cannon, round, summarize, wallNow, calibrateClock } from './load.mjs';
import { agents, request } from './http.mjs';

export const submissionBody = (productId, externalRef = 'bench-ref', legalName = 'Bench Holdings LLC') =>
  JSON.stringify({
    externalRef,
    submissionType: 'application',
    effectiveDate: '2027-01-01',
    productId,
    applicant: { legalName },
  });

/**
 * A submission of a risk of its own (a legal name no other submission has), as partners' traffic is:
 * the body of the submit phases (productSubmit, floorSubmit). With one name for all (until 27 Nov,
 * issue 47), every create of a run took the same risk lock and waited for the one before, and
 * clearance's probes read that one risk's thousands of submissions: a measure of one risk submitted
 * 20,000 times (docs/performance.md, "Issue 47, third session").
 */
export const distinctRiskBody = (productId) => submissionBody(productId, 'bench-ref', `Bench Risk ${randomUUID()} LLC`);

const parse = (body) => {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
};

export const checks = {
  submitted: (status, body) => {
    const b = parse(body);
    return status === 200 && typeof b?.submissionId === 'string' && b.status === 'submitted';
  },
  health: (status, body) => status === 200 && parse(body)?.status === 'ok',
  jobSucceeded: (status, body) => status === 200 && parse(body)?.status === 'succeeded',
  policies50: (status, body) => status === 200 && parse(body)?.items?.length === 50,
};

export function productHeaders(stack, { principal = true } = {}) {
  return { authorization: `Bearer ${stack.token}`, ...(principal ? { 'x-principal-id': stack.principalId } : {}) };
}

/** POST /v1/submissions + Prefer: wait=15 with a fresh Idempotency-Key per request (README step 3). */
export function productSubmit(stack) {
  return {
    method: 'POST',
    path: '/v1/submissions',
    headers: { ...productHeaders(stack), 'content-type': 'application/json', prefer: 'wait=15' },
    // Each request's body is its own (setup): a risk no other submission has.
    setup: (context) => {
      context.key = randomUUID();
      context.sentAt = wallNow();
      return { headers: { 'idempotency-key': context.key }, body: distinctRiskBody(stack.productId) };
    },
  };
}

export function floorSubmit(stack) {
  return {
    method: 'POST',
    path: '/v1/submissions',
    headers: { 'content-type': 'application/json' },
    setup: () => ({ body: distinctRiskBody(stack.productId) }),
  };
}

/**
 * Sequential (one connection, one request at a time), floor and product interleaved in blocks so
 * background noise on a shared machine falls on both alike. Returns both summaries and the product's
 * per-request records (idempotency key, sent/ended wall-clock times) for the timeline.
 */
export async function sequential(stack, urls, { total, block }) {
  calibrateClock();
  const tap = await natsTap(stack);
  const lat = { floor: [], product: [] };
  const out = { floor: { ok: 0, errors: 0, badSamples: [] }, product: { ok: 0, errors: 0, badSamples: [] } };
  const records = [];
  for (let done = 0; done < total; done += block) {
    const n = Math.min(block, total - done);
    for (const which of ['floor', 'product']) {
      const r = await cannon({
        url: which === 'floor' ? urls.floor : stack.gatewayUrl,
        request: which === 'floor' ? floorSubmit(stack) : productSubmit(stack),
        check: checks.submitted,
        connections: 1,
        amount: n,
        onRecord:
          which === 'product'
            ? (context, status, body) => records.push({ key: context.key, sentAt: context.sentAt, endedAt: wallNow(), status, ok: checks.submitted(status, body) })
            : undefined,
        keepLatencies: true,
      });
      for (const l of r.rawLatencies) lat[which].push(l);
      out[which].ok += r.ok;
      out[which].errors += r.errors;
      out[which].badSamples.push(...r.badSamples.slice(0, 2));
    }
  }
  for (const which of ['floor', 'product']) {
    out[which].requests = lat[which].length;
    out[which].latencyMs = summarize(lat[which]);
    out[which].badSamples = out[which].badSamples.slice(0, 3);
  }
  await sleep(200);
  await tap.close();
  return { ...out, records, tap };
}

/**
 * What PostgreSQL writes to its WAL per sequential submit+wait: records, bytes, writes and flushes
 * (fdatasync), from pg_stat_wal — the whole server's counters, so nothing else may run meanwhile (the
 * bench's database is the only one busy). A flush is what a synchronous commit waits for; the
 * asynchronous ones leave theirs to the WAL writer or to the next synchronous commit. Backends report
 * their counters when idle, at most every second, or after 10 s idle: hence the wait after the load.
 */
export async function walPerSubmit(stack, { total }) {
  const read = async () => (await stack.sql('SELECT wal_records, wal_bytes, wal_write, wal_sync FROM pg_stat_wal'))[0];
  await sleep(11_000);
  const before = await read();
  const r = await cannon({ url: stack.gatewayUrl, request: productSubmit(stack), check: checks.submitted, connections: 1, amount: total });
  await sleep(11_000);
  const after = await read();
  const per = (k) => round((Number(after[k]) - Number(before[k])) / r.ok, 2);
  return { submits: r.ok, errors: r.errors, records: per('wal_records'), bytes: per('wal_bytes'), writes: per('wal_write'), flushes: per('wal_sync') };
}

/**
 * Listens on the shared NATS server to the bench stack's own traffic — job publications to the jobs
 * stream, their deliveries to the worker's pull inbox, the worker's acks, the settlement events — and
 * notes when each passes, by job id. Core NATS hands a copy of every message to every matching
 * subscription, so this observes the product without touching it.
 */
export async function natsTap(stack) {
  const nc = await connect({ servers: stack.natsUrl });
  const seen = new Map();
  const replyToJob = new Map();
  const at = (id) => {
    let e = seen.get(id);
    if (!e) seen.set(id, (e = {}));
    return e;
  };
  const dec = new TextDecoder();
  const json = (m) => {
    try {
      return JSON.parse(dec.decode(m.data));
    } catch {
      return undefined;
    }
  };
  nc.subscribe(`${stack.prefix}.jobs.>`, {
    callback: (_e, m) => {
      const id = json(m)?.jobId;
      if (id) at(id).published ??= wallNow();
    },
  });
  nc.subscribe('_INBOX.>', {
    callback: (_e, m) => {
      if (!m.reply?.startsWith(`$JS.ACK.${stack.prefix}_JOBS.`)) return;
      const id = json(m)?.jobId;
      if (!id) return;
      at(id).delivered ??= wallNow();
      replyToJob.set(m.reply, id);
    },
  });
  nc.subscribe(`$JS.ACK.${stack.prefix}_JOBS.>`, {
    callback: (_e, m) => {
      const id = replyToJob.get(m.subject);
      if (id) at(id).acked ??= wallNow();
    },
  });
  nc.subscribe(`${stack.prefix}.events.job_settled`, {
    callback: (_e, m) => {
      const id = json(m)?.job?.id;
      if (id) at(id).event ??= wallNow();
    },
  });
  await nc.flush();
  return { seen, close: () => nc.close() };
}

/**
 * Where a sequential submit-with-wait spends its time, from timestamps the product records itself —
 * job.idempotency_keys.created_at (now(): the SubmitJob transaction's start, µs), job.jobs.created_at
 * and submission.submissions.created_at (clock_timestamp() truncated to ms: +0.5 ms corrects the mean
 * bias of the truncation), job.jobs.settled_at (now() of the settling UPDATE, µs) — and from the NATS
 * tap (publish, delivery to the worker, settlement event), against the bench's own send and receive
 * times. One machine, one clock.
 */
export async function timeline(stack, records, tap) {
  const good = records.filter((r) => r.ok);
  if (good.length === 0) return { n: 0 };
  const rows = await stack.sql(
    `SELECT k.key, j.job_id,
            extract(epoch FROM k.created_at) * 1000 AS begin_ms,
            extract(epoch FROM j.created_at) * 1000 + 0.5 AS job_ms,
            extract(epoch FROM s.created_at) * 1000 + 0.5 AS sub_ms,
            extract(epoch FROM j.settled_at) * 1000 AS settled_ms
       FROM job.idempotency_keys k
       JOIN job.jobs j ON j.job_id = k.job_id
       LEFT JOIN submission.submissions s ON s.job_id = j.job_id
      WHERE k.key = ANY($1)`,
    [good.map((r) => r.key)],
  );
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const stageNames = [
    'request sent → SubmitJob statement begins (gateway: auth, rate limit, guard, body, ajv, fingerprint; gRPC SubmitJob; pool checkout)',
    'statement begins → job row inserted (idempotency-key INSERT, jobs INSERT: one statement)',
    'job row → job published to JetStream (outbox INSERT, COMMIT, fast-path publish)',
    'published → delivered to the worker (JetStream, pull consumer)',
    'delivered → submission row inserted (ClaimJobs hop: the claim, UPDATE + COMMIT; CreateSubmission hop; GetProduct only on a cache miss)',
    'submission row → settling UPDATE starts (CreateSubmission reply, SettleJob hop)',
    'settling UPDATE → settlement event on NATS (UPDATE, COMMIT, publish)',
    'settlement event → response received (gateway wake-up, HTTP response)',
  ];
  const stages = Object.fromEntries([...stageNames, 'total'].map((k) => [k, []]));
  for (const r of good) {
    const t = byKey.get(r.key);
    const n = tap?.seen.get(t?.job_id);
    if (!t || t.sub_ms === null || t.settled_ms === null || !n?.published || !n.delivered || !n.event) continue;
    const points = [r.sentAt, Number(t.begin_ms), Number(t.job_ms), n.published, n.delivered, Number(t.sub_ms), Number(t.settled_ms), n.event, r.endedAt];
    for (let i = 0; i < stageNames.length; i++) stages[stageNames[i]].push(points[i + 1] - points[i]);
    stages.total.push(r.endedAt - r.sentAt);
  }
  return {
    n: stages.total.length,
    note: 'ms per stage (mean, p50, p90); stages bounded by the ms-truncated created_at columns are exact only on average',
    stages: Object.fromEntries(
      Object.entries(stages).map(([k, v]) => {
        const s = summarize(v);
        return [k, { mean: s.mean, p50: s.p50, p90: s.p90 }];
      }),
    ),
  };
}

/** A settled job id of the bench client (for GET /v1/jobs/{id}). */
export async function settledJobId(stack) {
  const [agent] = agents(1);
  const res = await request(`${stack.gatewayUrl}/v1/submissions`, {
    method: 'POST',
    headers: productHeaders(stack),
    body: submissionBody(stack.productId),
    agent,
  });
  if (res.status !== 202) throw new Error(`POST /v1/submissions answered ${res.status} ${res.text}`);
  const id = res.body.id;
  for (let i = 0; i < 20; i++) {
    const r = await request(`${stack.gatewayUrl}/v1/jobs/${id}`, { headers: { ...productHeaders(stack), prefer: 'wait=5' }, agent });
    if (r.body?.status === 'succeeded') {
      agent.destroy();
      return id;
    }
  }
  throw new Error(`job ${id} did not settle`);
}

/**
 * Settlement → waiting-response wake-up. Jobs with `sandbox:delay=1` are submitted at a steady rate
 * (below the worker's capacity, so wake-ups are not measured in a thundering herd); each is followed at
 * once by GET /v1/jobs/{id} with Prefer: wait=10. For each answer:
 *   fromSettle = response received − job.jobs.settled_at (the settling UPDATE's now(); same clock)
 *   fromEvent  = response received − the settlement event's arrival at the bench's own subscriber
 * fromSettle is the figure held to the target: it is what a partner sees after the job is settled in
 * the database (commit, event publish, NATS, gateway wake-up, HTTP write). fromEvent isolates the
 * gateway's part (the bench hears the event at the same moment the gateway does).
 */
export async function wakeup(stack, { count, ratePerS }) {
  calibrateClock();
  const names = { settled: `${stack.prefix}.events.job_settled` };
  const nc = await connect({ servers: stack.natsUrl });
  const eventAt = new Map();
  nc.subscribe(names.settled, {
    callback: (_e, msg) => {
      const at = wallNow();
      try {
        eventAt.set(JSON.parse(new TextDecoder().decode(msg.data)).job.id, at);
      } catch {
        // not an event
      }
    },
  });
  await nc.flush();
  const [agent] = agents(1);
  const results = [];
  const one = async () => {
    const sub = await request(`${stack.gatewayUrl}/v1/submissions`, {
      method: 'POST',
      headers: { ...productHeaders(stack), 'idempotency-key': randomUUID() },
      body: submissionBody(stack.productId, 'sandbox:delay=1'),
      agent,
    });
    if (sub.status !== 202) return results.push({ ok: false, status: sub.status });
    const id = sub.body.id;
    const res = await request(`${stack.gatewayUrl}/v1/jobs/${id}`, { headers: { ...productHeaders(stack), prefer: 'wait=10' }, agent });
    results.push({ id, ok: res.status === 200 && res.body?.status === 'succeeded', status: res.status, endedAt: res.endedAt, waitedMs: res.endedAt - res.sentAt });
  };
  const inflight = [];
  const gap = 1000 / ratePerS;
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const due = t0 + i * gap;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    inflight.push(one().catch((err) => results.push({ ok: false, error: err.message })));
  }
  await Promise.all(inflight);
  await sleep(200);
  await nc.close();
  agent.destroy();
  const okOnes = results.filter((r) => r.ok);
  const rows = await stack.sql('SELECT job_id, extract(epoch FROM settled_at) * 1000 AS settled_ms FROM job.jobs WHERE job_id = ANY($1)', [
    okOnes.map((r) => r.id),
  ]);
  const settledAt = new Map(rows.map((r) => [r.job_id, Number(r.settled_ms)]));
  const fromSettle = [];
  const fromEvent = [];
  for (const r of okOnes) {
    if (settledAt.has(r.id)) fromSettle.push(r.endedAt - settledAt.get(r.id));
    if (eventAt.has(r.id)) fromEvent.push(r.endedAt - eventAt.get(r.id));
  }
  return {
    waiters: count,
    ratePerS,
    ok: okOnes.length,
    errors: results.length - okOnes.length,
    fromSettleMs: summarize(fromSettle),
    fromEventMs: summarize(fromEvent),
    eventSeen: fromEvent.length,
  };
}

/** Costs of single hops on this machine, sequentially: the building blocks of the hot path. */
export async function hops(stack, { n }) {
  const out = {};
  const time = async (name, fn) => {
    for (let i = 0; i < Math.min(20, n); i++) await fn(i); // warm
    const lat = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await fn(i);
      lat.push(performance.now() - t);
    }
    out[name] = summarize(lat);
  };
  const db = await connectWithRetry(stack.databaseUrl);
  const jobId = await settledJobId(stack);
  await time('pg SELECT 1 (one round trip)', () => db.query('SELECT 1'));
  await time('pg SELECT job by primary key (GetJob’s query)', () =>
    db.query('SELECT job_id, kind, status, result, error, created_at, updated_at FROM job.jobs WHERE job_id = $1', [jobId]),
  );

  // What a commit costs here (WAL flush): the same one-row INSERT, durable and with
  // synchronous_commit off (session only).
  await db.query('CREATE TABLE IF NOT EXISTS public.bench_commit (id bigserial PRIMARY KEY, v text)');
  await time('pg INSERT one row, autocommit (includes the WAL flush)', () => db.query('INSERT INTO public.bench_commit (v) VALUES ($1)', ['x']));
  await db.query('SET synchronous_commit = off');
  await time('same INSERT with synchronous_commit = off (no flush wait)', () => db.query('INSERT INTO public.bench_commit (v) VALUES ($1)', ['x']));
  await db.query('SET synchronous_commit = on');
  await db.query('DROP TABLE public.bench_commit');

  const { createClient, serviceDefs } = await import(`${ROOT}services/shared/dist/grpc/index.js`);
  const defs = serviceDefs();
  const job = createClient(defs.job, stack.grpcAddress('job'), 5_000);
  const policy = createClient(defs.policy, stack.grpcAddress('policy'), 5_000);
  await time('gRPC JobService.GetJob (hop + that query)', () => job.GetJob({ jobId, tenantId: stack.tenant, partnerId: stack.partnerId }));
  await time('gRPC PolicyService.GetProduct (hop + one query)', () => policy.GetProduct({ productId: stack.productId }));
  const newJob = () => `job_${randomBytes(16).toString('hex')}`;
  // With the worker stopped: otherwise each call competes for the CPU with the worker carrying out
  // the previous job (a job costs ~10 ms of CPU across the processes), which is not this hop's cost.
  await stack.stopService('worker');
  await time('gRPC JobService.SubmitJob with Idempotency-Key (hop + transaction; worker stopped)', () =>
    job.SubmitJob({
      jobId: newJob(),
      kind: 'submission.create',
      caller: { tenantId: 'bench-hops', partnerId: 'bench-hops', clientId: 'bench-hops', principalId: '' },
      payloadJson: submissionBody(stack.productId),
      idempotency: { key: randomUUID(), scope: 'POST /v1/submissions', fingerprint: 'x' },
    }),
  );
  job.close();
  policy.close();

  // SubmitJob's writes as the job service first ran them (BEGIN, key INSERT, job INSERT, outbox
  // INSERT, COMMIT: five round trips) against the same writes as one statement, which is how the
  // service runs them now (services/job/src/repo.ts SUBMIT_WITH_KEY), on copies of the job tables in
  // a scratch schema: what folding a transaction into one statement is worth on this machine.
  await db.query(`CREATE SCHEMA hops;
    CREATE TABLE hops.jobs (LIKE job.jobs INCLUDING ALL);
    CREATE TABLE hops.idempotency_keys (LIKE job.idempotency_keys INCLUDING ALL);
    CREATE TABLE hops.outbox (LIKE job.outbox INCLUDING ALL);
    CREATE SEQUENCE hops.outbox_id_seq; ALTER TABLE hops.outbox ALTER COLUMN id SET DEFAULT nextval('hops.outbox_id_seq');`);
  const args = () => {
    const id = newJob();
    return { id, key: randomUUID(), payload: submissionBody(stack.productId) };
  };
  const KEY_SQL = `INSERT INTO hops.idempotency_keys (tenant_id, partner_id, client_id, scope, key, fingerprint, job_id, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(hours => $8))
         ON CONFLICT (tenant_id, partner_id, client_id, scope, key) DO UPDATE
            SET fingerprint = EXCLUDED.fingerprint, job_id = EXCLUDED.job_id, created_at = now(), expires_at = EXCLUDED.expires_at
          WHERE hops.idempotency_keys.expires_at <= now()
         RETURNING job_id`;
  const JOB_SQL = `INSERT INTO hops.jobs (job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'accepted')
       RETURNING job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, status, result, error, deliveries, created_at, updated_at`;
  await time('SubmitJob writes as five statements (the old transaction: 5 round trips, committed)', async () => {
    const a = args();
    await db.query('BEGIN');
    await db.query(KEY_SQL, ['t', 'p', 'c', 'POST /v1/submissions', a.key, 'f', a.id, 24]);
    await db.query(JOB_SQL, [a.id, 'submission.create', 't', 'p', 'c', null, a.payload]);
    await db.query('INSERT INTO hops.outbox (job_id, subject) VALUES ($1, $2) RETURNING id', [a.id, 'x.jobs.submission_create']);
    await db.query('COMMIT');
  });
  await time('same writes as one statement, as the service runs them (data-modifying CTE, 1 round trip)', async () => {
    const a = args();
    await db.query(
      `WITH k AS (${KEY_SQL.replace(/\$8/g, '$10')}),
            j AS (INSERT INTO hops.jobs (job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, status)
                  SELECT $7, $8, $1, $2, $3, NULL, $9::jsonb, 'accepted' FROM k
                  RETURNING job_id, kind, tenant_id, partner_id, client_id, principal_id, payload, status, result, error, deliveries, created_at, updated_at),
            o AS (INSERT INTO hops.outbox (job_id, subject) SELECT job_id, 'x.jobs.submission_create' FROM j RETURNING id)
       SELECT j.*, o.id AS outbox_id FROM j, o`,
      ['t', 'p', 'c', 'POST /v1/submissions', a.key, 'f', a.id, 'submission.create', a.payload, 24],
    );
  });
  // Plans of the transaction's statements (rolled back).
  const explain = {};
  await db.query('BEGIN');
  for (const [name, sql, params] of [
    ['idempotency key INSERT', KEY_SQL, ['t', 'p', 'c', 'POST /v1/submissions', randomUUID(), 'f', 'job_explain', 24]],
    ['jobs INSERT', JOB_SQL, ['job_explain', 'submission.create', 't', 'p', 'c', null, submissionBody(stack.productId)]],
    ['outbox INSERT', 'INSERT INTO hops.outbox (job_id, subject) VALUES ($1, $2) RETURNING id', ['job_explain', 's']],
  ]) {
    const r = await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
    const plan = r.rows[0]['QUERY PLAN'][0];
    explain[name] = { planningMs: plan['Planning Time'], executionMs: plan['Execution Time'], node: plan.Plan['Node Type'] };
  }
  await db.query('ROLLBACK');
  out.explainSubmitJobStatements = explain;
  await db.query('DROP SCHEMA hops CASCADE');

  // NATS: a JetStream publish awaiting its ack (file storage, as the jobs stream), and a core NATS
  // request/reply between two connections (≈ one settlement event's trip plus the way back).
  const nc = await connect({ servers: stack.natsUrl });
  const nc2 = await connect({ servers: stack.natsUrl });
  const jsm = await nc.jetstreamManager();
  const stream = `${stack.prefix}_HOPS`;
  await jsm.streams.add({
    name: stream,
    subjects: [`${stack.prefix}.hops.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(60_000),
  });
  const js = nc.jetstream();
  await time('JetStream publish + ack (file storage, Nats-Msg-Id)', (i) => js.publish(`${stack.prefix}.hops.x`, new TextEncoder().encode(`{"jobId":"${i}"}`), { msgID: `${Date.now()}-${i}` }));
  nc2.subscribe(`${stack.prefix}.hops.echo`, { callback: (_e, m) => m.respond(m.data) });
  await nc2.flush();
  await time('core NATS request/reply between two connections', () => nc.request(`${stack.prefix}.hops.echo`, new Uint8Array(64), { timeout: 2_000 }));
  await jsm.streams.delete(stream);
  await nc.close();
  await nc2.close();
  await db.end();
  await stack.startService('worker'); // now it works off the jobs SubmitJob queued above
  return out;
}

/**
 * `count` submissions at `ratePerS` (open loop: each starts on its schedule, whatever the answers of
 * the earlier ones); resolves with the job ids of the accepted ones and how many were not.
 */
export async function submitAtRate(stack, agent, { count, ratePerS }) {
  const ids = [];
  let errors = 0;
  const t0 = performance.now();
  const inflight = [];
  for (let i = 0; i < count; i++) {
    const wait = t0 + (i * 1000) / ratePerS - performance.now();
    if (wait > 0) await sleep(wait);
    inflight.push(
      request(`${stack.gatewayUrl}/v1/submissions`, {
        method: 'POST',
        headers: { ...productHeaders(stack), 'idempotency-key': randomUUID() },
        body: submissionBody(stack.productId),
        agent,
      }).then(
        (r) => (r.status === 202 || r.status === 200 ? ids.push(r.body.id ?? r.body.jobId) : errors++),
        () => errors++,
      ),
    );
  }
  await Promise.all(inflight);
  return { ids, errors };
}
