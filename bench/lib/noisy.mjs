// A noisy neighbour (issue 36): another tenant's GET /v1/health and settle → webhook latency, measured
// alone and again while a partner of a second tenant floods the gateway within its rate limit —
// deeply nested bodies, 200k-element arrays, pings of its disabled webhook endpoint, and waiting
// requests held at its cap (MAX_WAITERS_PER_PARTNER) with more refused beyond it — and then while it
// floods POST /v1/submissions/validate with 1 MB bodies, eight in flight, at the default rate limit
// (50/s, burst 100), where a JSON body counts one request per 64 KiB (issue 48, 3). The gateway runs
// with the default per-partner cap for the phase, and with the bench's setting again afterwards.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { sleep } from './stack.mjs';
import { calibrateClock, round, summarize, wallNow } from './load.mjs';
import { agents, request } from './http.mjs';
import { productHeaders, submissionBody } from './phases.mjs';

const PER_PARTNER_CAP = 100;

async function receiver(onEvent) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = wallNow();
      res.writeHead(204).end();
      try {
        onEvent(JSON.parse(Buffer.concat(chunks).toString('utf8')), at);
      } catch {
        // not an event
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A call that must answer `expect` (a status), as a job when it is a mutation. */
async function must(what, expect, p) {
  const r = await p;
  if (r.status !== expect) throw new Error(`${what} answered ${r.status}: ${r.text}`);
  return r;
}

/**
 * `seconds` of the quiet partner's sequential health calls beside its submissions at `ratePerS`,
 * each delivered to its endpoint: health latencies, and settle commit → receiver latencies.
 */
async function quietWindow(stack, agent, deliveries, { seconds, ratePerS }) {
  const health = [];
  const ids = [];
  let errors = 0;
  const until = Date.now() + seconds * 1000;
  const healthLoop = (async () => {
    while (Date.now() < until) {
      const t = performance.now();
      const r = await request(`${stack.gatewayUrl}/v1/health`, { headers: productHeaders(stack, { principal: false }), agent });
      if (r.status === 200) health.push(performance.now() - t);
      else errors++;
    }
  })();
  const submits = [];
  for (let i = 0; Date.now() < until; i++) {
    submits.push(
      request(`${stack.gatewayUrl}/v1/submissions`, {
        method: 'POST',
        headers: { ...productHeaders(stack), 'idempotency-key': randomUUID() },
        body: submissionBody(stack.productId),
        agent,
      }).then((r) => (r.status === 202 || r.status === 200 ? ids.push(r.body.id ?? r.body.jobId) : errors++)),
    );
    await sleep(1000 / ratePerS);
  }
  await Promise.all([healthLoop, ...submits]);
  const deadline = Date.now() + 30_000;
  while (ids.some((id) => !deliveries.has(id)) && Date.now() < deadline) await sleep(50);
  const webhook = ids.filter((id) => deliveries.has(id)).map((id) => deliveries.get(id));
  return { healthMs: summarize(health), webhookFromCommitMs: summarize(webhook), submissions: ids.length, missing: ids.length - webhook.length, errors };
}

export async function noisyNeighbour(stack, { seconds, floodRps, ratePerS }) {
  calibrateClock();
  await stack.stopService('gateway');
  await stack.startService('gateway', { env: { MAX_WAITERS_PER_PARTNER: String(PER_PARTNER_CAP) } });
  const [quietAgent, noisyAgent, heldAgent] = agents(3);

  // The quiet partner (the bench's own) and its endpoint for job.succeeded.
  const deliveries = new Map();
  const rx = await receiver((event, at) => deliveries.set(event.data.id, at - Date.parse(event.timestamp)));
  const quietEndpoint = await must(
    'the quiet endpoint',
    200,
    request(`${stack.gatewayUrl}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { ...productHeaders(stack), prefer: 'wait=20' },
      body: { url: rx.url, eventTypes: ['job.succeeded'] },
      agent: quietAgent,
    }),
  );

  // The noisy partner: another tenant, its disabled endpoint, and a slow job to wait on.
  const noisyClient = await stack.admin('client', 'create', '--tenant', 'bench-noisy', '--partner', `noisy-${randomUUID().slice(0, 8)}`, '--name', 'noisy',
    '--permissions', 'health/read,submissions/read,submissions/write,jobs/read,events/read,webhooks/read,webhooks/write');
  const noisyToken = await stack.fetchToken(noisyClient);
  const noisy = { authorization: `Bearer ${noisyToken}` };
  const ownEndpoint = await must(
    'the noisy endpoint',
    200,
    request(`${stack.gatewayUrl}/v1/webhook-endpoints`, { method: 'POST', headers: { ...noisy, prefer: 'wait=20' }, body: { url: rx.url, eventTypes: ['*'] }, agent: noisyAgent }),
  );
  const endpointId = ownEndpoint.body.endpointId;
  await must('disabling it', 200, request(`${stack.gatewayUrl}/v1/webhook-endpoints/${endpointId}`, { method: 'PATCH', headers: { ...noisy, prefer: 'wait=20' }, body: { status: 'disabled' }, agent: noisyAgent }));
  const slow = await must('a slow job', 202, request(`${stack.gatewayUrl}/v1/submissions`, { method: 'POST', headers: noisy, body: submissionBody(stack.productId, 'sandbox:delay=60'), agent: noisyAgent }));
  const slowJobUrl = `${stack.gatewayUrl}/v1/jobs/${slow.body.id}`;

  const alone = await quietWindow(stack, quietAgent, deliveries, { seconds, ratePerS });

  // The flood: the held requests first (up to the cap), then a paced mix.
  const held = [];
  for (let i = 0; i < PER_PARTNER_CAP; i++) held.push(request(slowJobUrl, { headers: { ...noisy, prefer: 'wait=30' }, agent: heldAgent }).catch(() => undefined));
  const nested = '{"a":'.repeat(8_000) + '1' + '}'.repeat(8_000);
  const huge = `[${'0,'.repeat(199_999)}0]`;
  const statuses = {};
  // The flood's own waits are refused while the held ones fill the cap; one let in before they all
  // arrive is answered (200) when its wait ends: within the window, not 30 s after it.
  const floodWaitS = Math.max(1, Math.ceil(seconds));
  let stop = false;
  const flood = (async () => {
    const sent = [];
    const t0 = performance.now();
    for (let i = 0; !stop; i++) {
      const kind = ['nested', 'huge', 'ping', 'wait'][i % 4];
      const r =
        kind === 'nested' ? request(`${stack.gatewayUrl}/v1/submissions`, { method: 'POST', headers: noisy, body: nested, agent: noisyAgent })
        : kind === 'huge' ? request(`${stack.gatewayUrl}/v1/submissions`, { method: 'POST', headers: noisy, body: huge, agent: noisyAgent })
        : kind === 'ping' ? request(`${stack.gatewayUrl}/v1/webhook-endpoints/${endpointId}/ping`, { method: 'POST', headers: noisy, agent: noisyAgent })
        : request(slowJobUrl, { headers: { ...noisy, prefer: `wait=${floodWaitS}` }, agent: noisyAgent });
      sent.push(r.then((res) => (statuses[`${kind} ${res.status}`] = (statuses[`${kind} ${res.status}`] ?? 0) + 1), () => (statuses[`${kind} error`] = (statuses[`${kind} error`] ?? 0) + 1)));
      const next = t0 + ((i + 1) * 1000) / floodRps - performance.now();
      if (next > 0) await sleep(next);
    }
    await Promise.all(sent);
  })();
  const flooded = await quietWindow(stack, quietAgent, deliveries, { seconds, ratePerS });
  stop = true;
  await flood;
  heldAgent.destroy();
  await Promise.all(held);

  // The validate flood, from a process of its own (validate-flood.mjs), by a client of the noisy
  // tenant that has the default rate limit (the bench's gateway lifts it) from its first request.
  const flooder = await stack.admin('client', 'create', '--tenant', 'bench-noisy', '--partner', `noisy-${randomUUID().slice(0, 8)}`, '--name', 'validate flood',
    '--permissions', 'submissions/write');
  await stack.admin('client', 'limits', '--client', flooder.clientId, '--rps', '50', '--burst', '100');
  const limitedToken = await stack.fetchToken(flooder);
  const validateFlood = new Promise((resolve, reject) =>
    execFile(process.execPath, [fileURLToPath(new URL('./validate-flood.mjs', import.meta.url)), stack.gatewayUrl, limitedToken, String(seconds + 1), '8'], (err, stdout) =>
      err ? reject(err) : resolve(JSON.parse(stdout).statuses),
    ),
  );
  // Settled together: a flood process that fails while the window runs is reported, not left unhandled.
  const [validateFlooded, validateStatuses] = await Promise.all([quietWindow(stack, quietAgent, deliveries, { seconds, ratePerS }), validateFlood]);

  await request(`${stack.gatewayUrl}/v1/webhook-endpoints/${quietEndpoint.body.endpointId}`, { method: 'DELETE', headers: { ...productHeaders(stack), prefer: 'wait=20' }, agent: quietAgent });
  await rx.close();
  quietAgent.destroy();
  noisyAgent.destroy();
  // Back to the bench's own gateway settings for the phases after this one.
  await stack.stopService('gateway');
  await stack.startService('gateway');
  const ratio = (a, b) => (a && b ? round(a / b, 2) : null);
  return {
    seconds,
    floodRps,
    alone,
    flooded,
    floodStatuses: statuses,
    healthP99Ratio: ratio(flooded.healthMs.p99, alone.healthMs.p99),
    webhookP99Ratio: ratio(flooded.webhookFromCommitMs.p99, alone.webhookFromCommitMs.p99),
    validateFlooded,
    validateFloodStatuses: validateStatuses,
    validateHealthP50Ratio: ratio(validateFlooded.healthMs.p50, alone.healthMs.p50),
    validateHealthP99Ratio: ratio(validateFlooded.healthMs.p99, alone.healthMs.p99),
  };
}
