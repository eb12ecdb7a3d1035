// Replicas of every process on one machine (issue 48, 10; docs/reliability.md "Replicas under
// faults"). ReplicaStack is the bench's private stack (stack.mjs: its own database, NATS prefix, free
// ports, every process of services/processes.json started through scripts/lib/launch.mjs) with n
// replicas of each process: each replica has listeners of its own, and a caller dials every replica
// of a gRPC service through one grpc-js target, `ipv4:127.0.0.1:a,127.0.0.1:b`, with round_robin
// (services/shared/src/grpc/client.ts). NATS is the three-node cluster of nats-cluster.mjs, its
// streams R3 (JOBS_STREAM_REPLICAS, EVENTS_STREAM_REPLICAS).
//
// replicaLoad() is the run: clients spread over the gateways submit (each with an Idempotency-Key of
// its own, resent on any failure as a partner would) and wait for the job on the *other* gateway; a
// feed reader follows GET /v1/events; a webhook endpoint for every event type points at a receiver
// here; mid-run one replica of every process is SIGKILLed. It returns the facts the chaos script and
// test/replicas.test.ts judge: jobs settled once, waits answered across gateways, the feed once and in
// one order, every webhook delivered.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { BenchStack, sleep } from './stack.mjs';
import { agents, request } from './http.mjs';
import { submissionBody } from './phases.mjs';
import { processNames, processOf } from '../../scripts/lib/processes.mjs';
import { freePorts } from './stack.mjs';
import { connect } from 'nats';

export class ReplicaStack extends BenchStack {
  /** @param {{ replicas: number, natsUrl: string, env?: Record<string, string> }} opts */
  constructor({ replicas, natsUrl, env = {} }) {
    super();
    this.replicas = replicas;
    this.clusterUrl = natsUrl;
    // BenchStack's own NATS connection (deleting the prefix's streams at cleanup): any live node.
    this.natsUrl = natsUrl.split(',');
    this.extraEnv = env;
  }

  /** Free ports for every listener of every replica of every process; replica 1's are BenchStack's `ports.of`. */
  async allocate() {
    await super.allocate();
    const listeners = processNames().flatMap((name) => Object.keys(processOf(name).ports).map((role) => ({ name, role })));
    const free = await freePorts(listeners.length * (this.replicas - 1));
    /** @type {Record<string, Record<string, number>[]>} */
    const byReplica = Object.fromEntries(processNames().map((name) => [name, [this.ports.of[name]]]));
    let i = 0;
    for (let r = 1; r < this.replicas; r++) {
      const of = {};
      for (const { name, role } of listeners) ((of[name] ??= {})[role] = free[i++]);
      for (const name of processNames()) byReplica[name].push(of[name]);
    }
    this.ports.replicas = byReplica;
    Object.assign(this.env, {
      NATS_URL: this.clusterUrl,
      JOBS_STREAM_REPLICAS: '3',
      EVENTS_STREAM_REPLICAS: '3',
      ...this.extraEnv,
    });
  }

  /** The grpc-js target of every replica of a gRPC service: ipv4:127.0.0.1:a,127.0.0.1:b (one replica: host:port). */
  grpcTargetOf(name) {
    const ports = this.ports.replicas[name].map((p) => p.grpc);
    return ports.length === 1 ? `127.0.0.1:${ports[0]}` : `ipv4:${ports.map((p) => `127.0.0.1:${p}`).join(',')}`;
  }

  /** A replica's own listeners (found by its ops port) and every replica of each service it calls. */
  processEnv(name, { opsPort } = {}) {
    const p = processOf(name);
    const ports = this.ports.replicas[name].find((x) => x.ops === opsPort) ?? this.ports.of[name];
    return {
      ...Object.fromEntries(Object.entries(p.portEnv).map(([role, variable]) => [variable, String(ports[role])])),
      ...Object.fromEntries(p.calls.map((callee) => [`${callee.toUpperCase()}_GRPC_ADDR`, this.grpcTargetOf(callee)])),
    };
  }

  /** Every replica of a process, one after the other (the first migrates its schema); keys name#1, name#2. */
  async startService(name, opts = {}) {
    let first;
    for (let r = 0; r < this.replicas; r++) {
      const start = () => super.startService(name, { ...opts, key: `${name}#${r + 1}`, opsPort: this.ports.replicas[name][r].ops });
      // PostgreSQL's connections are shared with everything else on the machine: a replica refused one
      // at its start (53300, too many clients) is started again after a pause, a few times.
      let proc;
      for (let attempt = 1; !proc; attempt++) {
        proc = await start().catch(async (err) => {
          if (attempt >= 5 || !/too many clients/.test(err.message)) throw err;
          await sleep(2_000 * attempt);
          return undefined;
        });
      }
      first ??= proc;
    }
    return first;
  }

  /** The live replica processes of a name. */
  live(name) {
    return [...this.procs.entries()].filter(([k, p]) => k.startsWith(`${name}#`) && p.alive).map(([, p]) => p);
  }

  get gatewayUrls() {
    return this.ports.replicas.gateway.map((p) => `http://127.0.0.1:${p.http}`);
  }

  get authUrls() {
    return this.ports.replicas.auth.map((p) => `http://127.0.0.1:${p.http}`);
  }

  /** A token from each auth replica (both sign with the keys they share in the database). */
  async tokens() {
    const out = [];
    for (const url of this.authUrls) {
      this.issuerUrl = url;
      const res = await fetch(`${url}/oauth2/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(this.client.clientId)}:${encodeURIComponent(this.client.clientSecret)}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: `grant_type=client_credentials&scope=${encodeURIComponent(this.scope)}`,
      });
      const body = await res.json();
      if (!res.ok) throw new Error(`${url} token endpoint answered ${res.status}: ${JSON.stringify(body)}`);
      out.push(body.access_token);
    }
    return out;
  }
}

/**
 * Which replica of each process the run kills: the first, except auth's second (the gateways fetch
 * the signing keys from AUTH_ISSUER, one address here: a Service in a cluster) — the kill of the
 * gateway the clients fail over from, of a gRPC replica its callers dial, of the feed writer that
 * held the lock, of a worker and a dispatcher with work in hand.
 */
export const KILLS = [
  ['worker', 1],
  ['job', 1],
  ['submission', 1],
  ['events', 1],
  ['dispatcher', 1],
  ['policy', 1],
  ['auth', 2],
  ['gateway', 1],
];

const FINAL = new Set(['succeeded', 'failed', 'canceled']);

/** A webhook receiver on loopback recording every delivery: webhook-id → event, and how often it came. */
async function webhookReceiver() {
  const byWebhookId = new Map();
  let deliveries = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      deliveries++;
      const id = String(req.headers['webhook-id'] ?? '');
      let event;
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        event = undefined;
      }
      const seen = byWebhookId.get(id);
      if (seen) seen.times++;
      else byWebhookId.set(id, { times: 1, eventId: event?.id, type: event?.type });
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    byWebhookId,
    deliveries: () => deliveries,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Runs the load (and, with kill: true, the kills) against a started ReplicaStack.
 * @param {ReplicaStack} stack
 * A deadline (epoch ms) bounds the whole run: past it no client starts a job or sends again, and the
 * waits for the feed and the webhooks end, so the run reports what it saw (jobs left unsettled, events
 * not yet in the feed or delivered) instead of outliving its caller's timeout.
 * @param {{ jobs: number, concurrency: number, kill?: boolean, killAt?: number, probes?: number, settleTimeoutMs?: number, deadline?: number, log?: (s: string) => void }} opts
 */
export async function replicaLoad(stack, { jobs, concurrency, kill = false, killAt = 0.35, probes = 0, settleTimeoutMs = 90_000, deadline = Infinity, log = () => undefined, cluster }) {
  const began = Date.now();
  const late = () => Date.now() >= deadline;
  /** Waits until done() or the time is up, saying every 10 s what it still waits for. */
  const waitFor = async (what, done, ms, missing) => {
    const until = Math.min(Date.now() + ms, deadline);
    let said = Date.now();
    while (!done() && Date.now() < until) {
      await sleep(100);
      if (Date.now() - said >= 10_000) {
        said = Date.now();
        log(`  … ${Math.round((said - began) / 1000)} s: waiting for ${what}: ${missing()}`);
      }
    }
  };
  const gateways = stack.gatewayUrls;
  const tokens = await stack.tokens();
  const agentOf = agents(gateways.length + 2);
  const headers = (i) => ({ authorization: `Bearer ${tokens[i % tokens.length]}`, 'x-principal-id': stack.principalId });
  const receiver = await webhookReceiver();
  const unexpected = [];
  const note = (what) => unexpected.length < 50 && unexpected.push(what);

  // A webhook endpoint for every event type, before any job.
  const created = await request(`${gateways[0]}/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { ...headers(0), 'idempotency-key': randomUUID(), prefer: 'wait=20' },
    body: JSON.stringify({ url: receiver.url, eventTypes: ['*'] }),
    agent: agentOf[0],
  });
  if (created.status !== 200) throw new Error(`POST /v1/webhook-endpoints answered ${created.status}: ${created.text}`);

  // The feed, followed as a partner follows it: one cursor, moved to the other gateway when one fails.
  const followed = [];
  let following = true;
  let readerSwitches = 0;
  const reader = (async () => {
    let g = 0;
    let cursor;
    while (following) {
      const q = cursor ? `cursor=${encodeURIComponent(cursor)}&limit=200` : 'limit=200';
      const r = await request(`${gateways[g]}/v1/events?${q}`, { headers: { ...headers(0), prefer: 'wait=1' }, agent: agentOf[gateways.length] }).catch(() => undefined);
      if (!r) {
        g = (g + 1) % gateways.length;
        readerSwitches++;
        await sleep(100);
        continue;
      }
      if (r.status !== 200) {
        if (r.status !== 503) note(`GET /v1/events ${r.status} ${r.text.slice(0, 200)}`);
        await sleep(100);
        continue;
      }
      for (const e of r.body.items) followed.push({ id: e.id, type: e.type, subject: e.data?.id });
      cursor = r.body.nextCursor ?? cursor;
    }
  })();

  // Waits answered on the other gateway: a job held (sandbox:hold) so the wait is registered before it
  // settles, submitted on gateway a, awaited on gateway b.
  const probeResults = [];
  const probe = async (a, b) => {
    const p = await request(`${gateways[a]}/v1/submissions`, {
      method: 'POST',
      headers: { ...headers(a), 'idempotency-key': randomUUID() },
      body: submissionBody(stack.productId, 'sandbox:hold=2'),
      agent: agentOf[a],
    });
    if (p.status !== 202) throw new Error(`probe submit answered ${p.status}: ${p.text}`);
    const t0 = Date.now();
    const w = await request(`${gateways[b]}/v1/jobs/${p.body.id}`, { headers: { ...headers(b), prefer: 'wait=30' }, agent: agentOf[b] });
    probeResults.push({ submittedOn: a, waitedOn: b, statusWhenSubmitted: p.body.status, status: w.status, jobStatus: w.body?.status, waitedMs: Date.now() - t0, jobId: p.body.id });
  };
  if (gateways.length > 1) await Promise.all(Array.from({ length: probes }, (_, i) => probe(i % 2, (i + 1) % 2)));

  // The clients: each job is submitted on the client's gateway and awaited on the other; any failure
  // is resent with the same Idempotency-Key (a dropped connection: on the other gateway).
  const results = [];
  /** Jobs a client gave up on at the deadline. */
  const unfinished = [];
  const kills = [];
  let accepted = 0;
  let next = 0;
  let killing;
  const t0 = Date.now();
  const oneJob = async (client) => {
    const key = randomUUID();
    let g = client % gateways.length;
    let job;
    let failovers = 0;
    for (let attempt = 0; !job; attempt++) {
      if (attempt > 400) throw new Error(`job with key ${key} was never accepted`);
      if (late()) {
        unfinished.push({ key, stage: 'not accepted by the deadline' });
        return;
      }
      const r = await request(`${gateways[g]}/v1/submissions`, {
        method: 'POST',
        headers: { ...headers(client), 'idempotency-key': key },
        body: submissionBody(stack.productId, `replica-${client}`),
        agent: agentOf[g],
      }).catch(() => undefined);
      if (!r) {
        g = (g + 1) % gateways.length;
        failovers++;
        await sleep(50);
      } else if (r.status === 202) job = { id: r.body.id };
      // A resend that found its job settled answers with the result; Job-Id names the job.
      else if (r.status === 200 && r.headers['job-id']) job = { id: String(r.headers['job-id']) };
      else {
        if (r.status !== 503 && r.status !== 429) note(`POST /v1/submissions ${r.status} ${r.text.slice(0, 200)}`);
        await sleep(100);
      }
    }
    const submittedOn = g;
    accepted++;
    if (kill && !killing && accepted >= jobs * killAt) killing = killOne();
    let w = (g + 1) % gateways.length;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 400) throw new Error(`job ${job.id} never settled`);
      if (late()) {
        unfinished.push({ key, jobId: job.id, stage: 'not settled by the deadline' });
        return;
      }
      const r = await request(`${gateways[w]}/v1/jobs/${job.id}`, { headers: { ...headers(client), prefer: 'wait=20' }, agent: agentOf[w] }).catch(() => undefined);
      if (!r) {
        w = (w + 1) % gateways.length;
        failovers++;
        await sleep(50);
      } else if (r.status === 200 && FINAL.has(r.body.status)) {
        results.push({ key, jobId: job.id, status: r.body.status, submittedOn, answeredOn: w, failovers });
        return;
      } else if (r.status !== 200) {
        if (r.status !== 503) note(`GET /v1/jobs ${r.status} ${r.text.slice(0, 200)}`);
        await sleep(100);
      }
    }
  };
  const killOne = async () => {
    for (const [name, replica] of KILLS) {
      const proc = stack.procs.get(`${name}#${replica}`);
      if (!proc?.alive) continue;
      proc.kill('SIGKILL');
      kills.push({ process: `${name}#${replica}`, pid: proc.pid, atMs: Date.now() - t0, acceptedBefore: accepted });
      log(`  SIGKILL ${name}#${replica} (pid ${proc.pid}) after ${accepted} accepted jobs`);
      await sleep(250);
    }
    // One node of the JetStream cluster too (the R3 streams keep their quorum on the other two).
    if (cluster) {
      void cluster.kill(0);
      kills.push({ process: 'nats#1', pid: cluster.nodes[0].child.pid, atMs: Date.now() - t0, acceptedBefore: accepted });
      log(`  SIGKILL nats-server ${cluster.nodes[0].name} after ${accepted} accepted jobs`);
    }
  };
  await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      while (next < jobs && !late()) {
        // The second half of the load waits for the kills to finish: jobs are then accepted after the
        // last kill however fast the machine is (on a quiet one, all 120 of --ci were accepted during
        // the 2 s the kills take, and nothing was proven of the survivors).
        if (kill && next >= jobs * Math.max(killAt, 0.5)) {
          while (!killing) await sleep(10);
          await killing;
          if (next >= jobs) break;
        }
        next++;
        await oneJob(client);
      }
    }),
  );
  const loadMs = Date.now() - t0;
  await killing;
  for (; next < jobs; next++) unfinished.push({ stage: 'not started by the deadline' });
  log(`  load: ${results.length} jobs settled in ${(loadMs / 1000).toFixed(1)} s${unfinished.length ? `, ${unfinished.length} given up at the deadline` : ''}`);

  // Every job's events, once, in the feed; then every one of them delivered to the webhook.
  const jobIds = results.map((r) => r.jobId).concat(probeResults.map((p) => p.jobId));
  const settledEvent = (e) => ['job.succeeded', 'job.failed', 'job.canceled'].includes(e.type);
  const jobIdSet = new Set(jobIds);
  const settledSeen = () => new Set(followed.filter((e) => settledEvent(e) && jobIdSet.has(e.subject)).map((e) => e.subject)).size;
  // Each job made one submission: its submission.created comes from another publisher, in either order.
  const createdSeen = () => followed.filter((e) => e.type === 'submission.created').length;
  const feedAt = Date.now();
  await waitFor(
    'the feed',
    () => settledSeen() >= jobIds.length && createdSeen() >= jobIds.length,
    settleTimeoutMs,
    () => `${settledSeen()} of ${jobIds.length} jobs' settled events and ${createdSeen()} of ${jobIds.length} submission.created followed (${followed.length} events, reader on gateway switches ${readerSwitches})`,
  );
  const feedMs = Date.now() - feedAt;
  following = false;
  await reader;

  // The whole feed again from its start, on a gateway that lives.
  const liveGateway = gateways.findIndex((_, i) => stack.procs.get(`gateway#${i + 1}`)?.alive);
  const full = [];
  for (let cursor; ; ) {
    const q = cursor ? `cursor=${encodeURIComponent(cursor)}&limit=200` : 'limit=200';
    const r = await request(`${gateways[liveGateway]}/v1/events?${q}`, { headers: headers(0), agent: agentOf[liveGateway] });
    if (r.status !== 200) throw new Error(`GET /v1/events answered ${r.status}: ${r.text}`);
    for (const e of r.body.items) full.push({ id: e.id, type: e.type, subject: e.data?.id });
    if (r.body.items.length === 0 || !r.body.nextCursor || r.body.nextCursor === cursor) break;
    cursor = r.body.nextCursor;
  }
  const fullIds = full.map((e) => e.id);
  const followedIds = followed.map((e) => e.id);
  const delivered = () => new Set([...receiver.byWebhookId.values()].map((v) => v.eventId));
  // Every event of the run's jobs and submissions must reach the endpoint (the events of the job that
  // created the endpoint, stored as it came to be, are not judged: nothing promises them to it).
  const expected = full.filter((e) => e.type === 'submission.created' || jobIdSet.has(e.subject));
  const hooksAt = Date.now();
  await waitFor(
    'the webhooks',
    () => expected.every((e) => delivered().has(e.id)),
    settleTimeoutMs,
    () => `${expected.filter((e) => !delivered().has(e.id)).length} of ${expected.length} events not delivered (${receiver.deliveries()} deliveries so far)`,
  );
  const hooksMs = Date.now() - hooksAt;

  // What the database says of every accepted job.
  const keys = results.map((r) => r.key);
  const jobRows = await stack.sql(
    `SELECT j.job_id, j.status, (SELECT count(*)::int FROM submission.submissions s WHERE s.job_id = j.job_id) AS submissions
       FROM job.jobs j WHERE j.job_id = ANY($1)`,
    [jobIds],
  );
  // A job given up at the deadline, as the database has it (status, deliveries, last change, whether its
  // job message is still in the outbox).
  const stuckIds = unfinished.flatMap((u) => (u.jobId ? [u.jobId] : []));
  const stuckRows = stuckIds.length
    ? await stack.sql(
        `SELECT j.job_id, j.status, j.deliveries, j.updated_at, EXISTS (SELECT 1 FROM job.outbox o WHERE o.job_id = j.job_id) AS in_outbox
           FROM job.jobs j WHERE j.job_id = ANY($1)`,
        [stuckIds],
      )
    : [];
  const stuckRow = new Map(stuckRows.map((r) => [r.job_id, r]));
  for (const u of unfinished) if (u.jobId) u.database = stuckRow.get(u.jobId) ?? 'no row';
  const keyRows = await stack.sql('SELECT key, count(*)::int AS n FROM job.idempotency_keys WHERE key = ANY($1) GROUP BY key', [keys]);
  const settledPerJob = new Map();
  for (const e of full.filter(settledEvent)) settledPerJob.set(e.subject, (settledPerJob.get(e.subject) ?? 0) + 1);
  const dupes = (ids) => ids.length - new Set(ids).size;
  const webhookIdsOk = [...receiver.byWebhookId.entries()].every(([id, v]) => id === v.eventId);
  const deliveredIds = delivered();

  // Where the events are on the way: the events stream's messages (each a committed change's event).
  let stream;
  try {
    const nc = await connect({ servers: stack.clusterUrl.split(','), timeout: 3_000 });
    try {
      const jsm = await nc.jetstreamManager();
      const info = await jsm.streams.info(`${stack.prefix}_EVENTS`);
      stream = { eventsStreamMessages: info.state.messages, leader: info.cluster?.leader, replicas: (info.cluster?.replicas?.length ?? 0) + 1 };
    } finally {
      await nc.close();
    }
  } catch (err) {
    stream = { error: err.message };
  }

  await receiver.close();
  for (const a of agentOf) a.destroy();
  return {
    replicas: stack.replicas,
    jobs: results.length,
    concurrency,
    loadMs,
    jobsPerS: Math.round((results.length / loadMs) * 10_000) / 10,
    crossGateway: results.filter((r) => r.submittedOn !== r.answeredOn).length,
    failovers: results.reduce((n, r) => n + r.failovers, 0),
    outcomes: countBy(results.map((r) => r.status)),
    // Jobs the clients gave up or never started at the deadline (none in a run that finished), by stage; the first ten begun.
    unfinished: { count: unfinished.length, byStage: countBy(unfinished.map((u) => u.stage)), first: unfinished.filter((u) => u.key).slice(0, 10) },
    // Where the time went: the load (kills included), the wait for the feed, the wait for the webhooks.
    phasesMs: { load: loadMs, feed: feedMs, webhooks: hooksMs, total: Date.now() - began },
    kills,
    acceptedAfterKills: kills.length ? results.length - Math.max(...kills.map((k) => k.acceptedBefore)) : 0,
    probes: probeResults,
    database: {
      jobs: jobRows.length,
      notSucceeded: jobRows.filter((r) => r.status !== 'succeeded').length,
      submissionsNotOne: jobRows.filter((r) => r.submissions !== 1).length,
      keysNotOneJob: keys.length - keyRows.filter((r) => r.n === 1).length,
    },
    feed: {
      events: full.length,
      duplicates: dupes(fullIds),
      followed: followed.length,
      followedDuplicates: dupes(followedIds),
      // The reader's order is the order of the feed read again from its start.
      followedIsPrefix: followedIds.every((id, i) => fullIds[i] === id),
      jobsWithoutSettledEvent: jobIds.filter((id) => !settledPerJob.has(id)).length,
      jobsSettledMoreThanOnce: [...settledPerJob.values()].filter((n) => n > 1).length,
      readerSwitches,
    },
    webhooks: {
      deliveries: receiver.deliveries(),
      distinct: receiver.byWebhookId.size,
      redelivered: receiver.deliveries() - receiver.byWebhookId.size,
      expected: expected.length,
      missing: expected.filter((e) => !deliveredIds.has(e.id)).length,
      missingEvents: expected.filter((e) => !deliveredIds.has(e.id)).slice(0, 10),
      notJudged: full.filter((e) => !expected.includes(e)).map((e) => ({ ...e, delivered: deliveredIds.has(e.id) })),
      webhookIdIsEventId: webhookIdsOk,
    },
    stream,
    unexpected,
    // The last lines (LOG_LEVEL warn: warnings and errors) of the replicas that were not killed, for a failure's diagnosis.
    survivorsLog: Object.fromEntries([...stack.procs.entries()].filter(([, p]) => p.alive).map(([k, p]) => [k, p.tail.slice(-8)])),
  };
}

function countBy(values) {
  const out = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
