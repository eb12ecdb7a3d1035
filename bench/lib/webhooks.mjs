// Webhook measurements (issue 15): event committed → delivery received by a local receiver; and
// fan-out — many events to many endpoints, deliveries per second and CPU per delivery, then the
// same with some endpoints hanging, to show that the healthy ones are not held up behind them.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { connect } from 'nats';
import { natsNames } from '../../services/shared/dist/nats/client.js';
import { newEventId } from '../../services/shared/dist/domain/events.js';
import { cpuDuring, sleep } from './stack.mjs';
import { calibrateClock, round, summarize, wallNow } from './load.mjs';
import { agents, request } from './http.mjs';
import { productHeaders, submitAtRate } from './phases.mjs';
import { stageTap } from './event-stages.mjs';

/** A receiver on loopback: each path /ep/<n> is an endpoint; hanging ones never answer. */
async function receiverServer(onDelivery) {
  const hanging = new Set();
  const held = new Set();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = wallNow();
      const n = Number(/^\/ep\/(\d+)/.exec(req.url ?? '')?.[1]);
      if (hanging.has(n)) {
        held.add(res);
        return;
      }
      res.writeHead(204).end();
      try {
        onDelivery(n, JSON.parse(Buffer.concat(chunks).toString('utf8')), at);
      } catch {
        // not an event
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (n) => `http://127.0.0.1:${server.address().port}/ep/${n}`,
    hanging,
    close: async () => {
      for (const r of held) r.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The dispatcher's claim queries and settlement batches so far (its /metrics). */
async function dispatcherCounts(stack) {
  const text = await (await fetch(`http://127.0.0.1:${stack.ports.ops.dispatcher}/metrics`)).text();
  const value = (re) => Number(re.exec(text)?.[1] ?? NaN);
  return {
    looks: value(/^partner_webhook_dispatcher_looks_total (\S+)$/m),
    settleBatches: value(/^partner_db_batch_size_count\{step="SettleDeliveries"\} (\S+)$/m),
    settled: value(/^partner_db_batch_size_sum\{step="SettleDeliveries"\} (\S+)$/m),
  };
}

async function createEndpoint(stack, agent, url, eventTypes) {
  const r = await request(`${stack.gatewayUrl}/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { ...productHeaders(stack), 'idempotency-key': randomUUID(), prefer: 'wait=20' },
    body: JSON.stringify({ url, eventTypes }),
    agent,
  });
  if (r.status !== 200) throw new Error(`POST /v1/webhook-endpoints answered ${r.status}: ${r.text}`);
  return r.body.endpointId;
}

async function deleteEndpoint(stack, agent, id) {
  await request(`${stack.gatewayUrl}/v1/webhook-endpoints/${id}`, { method: 'DELETE', headers: { ...productHeaders(stack), prefer: 'wait=20' }, agent });
}

/**
 * Submissions at ratePerS; one endpoint subscribed to job.succeeded. For each delivery: the time from
 * the event's timestamp (the settling commit) to the receiver having the request.
 */
export async function webhookLatency(stack, { count, ratePerS }) {
  calibrateClock();
  const [agent] = agents(1);
  const seen = new Map();
  const receivedAt = new Map();
  const rx = await receiverServer((_n, event, at) => {
    seen.set(event.data.id, at - Date.parse(event.timestamp));
    receivedAt.set(event.data.id, at);
  });
  const endpointId = await createEndpoint(stack, agent, rx.url(0), ['job.succeeded']);
  const tap = await stageTap(stack);
  const { ids, errors } = await submitAtRate(stack, agent, { count, ratePerS });
  const deadline = Date.now() + 30_000;
  while (ids.some((id) => !seen.has(id)) && Date.now() < deadline) await sleep(50);
  // The same deliveries by stage (issue 34), read before the endpoint (and its deliveries) is deleted.
  const stages = await tap.stages(ids, (id) => receivedAt.get(id), { webhook: true });
  await tap.close();
  await deleteEndpoint(stack, agent, endpointId);
  await rx.close();
  agent.destroy();
  const lat = ids.filter((id) => seen.has(id)).map((id) => seen.get(id));
  return { events: count, ratePerS, delivered: lat.length, missing: ids.length - lat.length, errors, fromCommitMs: summarize(lat), stages };
}

/**
 * `events` events (published straight onto the events stream, as the services' outboxes do) to
 * `endpoints` endpoints subscribed to everything: deliveries per second, CPU per delivery (the
 * dispatcher, the events service's fan-out, PostgreSQL), and commit → receipt latency. Then again
 * with `hanging` of the endpoints never answering: the healthy endpoints' latency beside the first run's.
 */
export async function webhookFanout(stack, { events, endpoints, hanging, timeoutMs = 120_000 }) {
  calibrateClock();
  const [agent] = agents(1);
  let run = { ids: new Set(), seen: new Set(), duplicates: 0, latencies: [], count: 0 };
  // Only the events this phase publishes count (creating the endpoints makes job events of its own),
  // each (endpoint, event) once; a second delivery of one is counted as a duplicate.
  const rx = await receiverServer((n, event, at) => {
    if (!run.ids.has(event.id)) return;
    const key = `${n} ${event.id}`;
    if (run.seen.has(key)) return void run.duplicates++;
    run.seen.add(key);
    run.count++;
    run.latencies.push(at - Date.parse(event.timestamp));
  });
  const ids = [];
  for (let n = 0; n < endpoints; n++) ids.push(await createEndpoint(stack, agent, rx.url(n), ['*']));
  const nc = await connect({ servers: stack.natsUrl });
  const js = nc.jetstream();
  const names = natsNames(stack.prefix);

  const once = async (hangingCount) => {
    rx.hanging.clear();
    for (let n = 0; n < hangingCount; n++) rx.hanging.add(n);
    run = { ids: new Set(), seen: new Set(), duplicates: 0, latencies: [], count: 0 };
    const expected = events * (endpoints - hangingCount);
    const counts0 = await dispatcherCounts(stack).catch(() => undefined);
    const { result: elapsedMs, cpuMs } = await cpuDuring(
      stack,
      { procs: { dispatcher: stack.procs.get('dispatcher'), events: stack.procs.get('events') }, pgApps: ['dispatcher', 'events'] },
      async () => {
        const t0 = performance.now();
        const acks = [];
        for (let i = 0; i < events; i++) {
          const event = { id: newEventId(), type: 'job.succeeded', timestamp: new Date().toISOString(), data: { id: `job_${randomUUID().replace(/-/g, '')}`, kind: 'submission.create', status: 'succeeded' } };
          run.ids.add(event.id);
          acks.push(js.publish(names.eventSubject(event.type), JSON.stringify({ tenantId: stack.tenant, partnerId: stack.partnerId, event }), { msgID: event.id }));
        }
        await Promise.all(acks);
        const deadline = Date.now() + timeoutMs;
        while (run.count < expected && Date.now() < deadline) await sleep(20);
        return performance.now() - t0;
      },
    );
    const cpuTotal = (cpuMs.dispatcher ?? 0) + (cpuMs.events ?? 0) + (cpuMs.postgres ?? 0);
    const counts1 = await dispatcherCounts(stack).catch(() => undefined);
    const delta = (k) => (counts0 && counts1 ? counts1[k] - counts0[k] : NaN);
    return {
      endpoints,
      hanging: hangingCount,
      events,
      expected,
      delivered: run.count,
      duplicates: run.duplicates,
      seconds: round(elapsedMs / 1000, 2),
      deliveriesPerS: round(run.count / (elapsedMs / 1000), 0),
      cpuMsPerDelivery: { dispatcher: round(cpuMs.dispatcher / run.count), events: round(cpuMs.events / run.count), postgres: round(cpuMs.postgres / run.count), total: round(cpuTotal / run.count) },
      fromCommitMs: summarize(run.latencies),
      // Claim queries per delivery, and successes per settlement transaction (issue 34).
      claimsPerDelivery: round(delta('looks') / run.count),
      meanSettleBatch: round(delta('settled') / delta('settleBatches'), 1),
    };
  };
  const healthy = await once(0);
  const withHanging = await once(hanging);
  await nc.close();
  await rx.close();
  for (const id of ids) await deleteEndpoint(stack, agent, id);
  agent.destroy();
  return { healthy, withHanging, healthyP99Ratio: round(withHanging.fromCommitMs.p99 / healthy.fromCommitMs.p99, 2) };
}
