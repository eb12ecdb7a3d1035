// Issue 45: what the request log costs the write path. Submit + wait at 64 connections through two
// gateways on the same services, in alternating slices: one recording (the default) and one started
// with REQUEST_LOG_ENABLED=false. The CPU of each slice counts every process of the submit path, the
// slice's own gateway, and the events service with its PostgreSQL backends (the request log's writer
// lives there; both sides pay its feed work alike). Goal: at most 5 % more CPU per submit.
// Then the log's storage: what the day partitions of events.request_log (heap, TOAST, indexes) grew
// by during the measured submits, per entry they added.
import { cpuDuring, freePorts, sleep, submitPath, submitPathWithDatabase } from './stack.mjs';
import { cannon, interleave, round } from './load.mjs';
import { checks, productSubmit } from './phases.mjs';

/** The request log's partitions (heap, TOAST, indexes) and entries, once the writer has caught up. */
export async function requestLogSize(stack) {
  let last = -1;
  // The writer is a flush (≤ 200 ms) and a batch insert behind: wait until the count stops moving.
  for (let i = 0; i < 50; i++) {
    const [{ n }] = await stack.sql('SELECT count(*)::int AS n FROM events.request_log');
    if (n === last) break;
    last = n;
    await sleep(500);
  }
  const [{ bytes, n }] = await stack.sql(
    `SELECT coalesce(sum(pg_total_relation_size(i.inhrelid)), 0)::bigint AS bytes, (SELECT count(*) FROM events.request_log)::bigint AS n
       FROM pg_inherits i WHERE i.inhparent = 'events.request_log'::regclass`,
  );
  return { entries: Number(n), bytes: Number(bytes) };
}

/**
 * Waits until no job created since `since` (a Date) is unsettled, twice in a row 50 ms apart. A slice that
 * ends leaves up to 64 submits in flight, which the services still carry out after autocannon has
 * hung up: without this, the next slice (the other side's) would pay their CPU and wait behind them.
 * In the smoke run, on a loaded machine, that backlog outlasted the other side's whole 0.75 s slice.
 */
export async function settleBacklog(stack, since, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let idle = 0;
  while (idle < 2) {
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM job.jobs WHERE status IN ('accepted', 'running') AND created_at >= $1`, [since]);
    idle = n === 0 ? idle + 1 : 0;
    if (Date.now() > deadline) throw new Error(`${n} jobs still unsettled after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** @param {{ stack: import('./stack.mjs').BenchStack, P: { rounds: number, warmS: number, concS: number }, say: (msg: string) => void }} opts */
export async function requestLogCost({ stack, P, say }) {
  // Two gateways started alike for this experiment (the stack's own has served every earlier phase:
  // warmer, it would favour whichever side it played), one recording and one not.
  const [onHttp, onOps, offHttp, offOps] = await freePorts(4);
  const sides = [
    { name: 'off', key: 'gateway-log-off', http: offHttp, ops: offOps, env: { REQUEST_LOG_ENABLED: 'false' } },
    { name: 'on', key: 'gateway-log-on', http: onHttp, ops: onOps, env: {} },
  ];
  const since = new Date();
  for (const s of sides) await stack.startService('gateway', { key: s.key, opsPort: s.ops, env: { PORT: String(s.http), ...s.env } });
  try {
    for (let i = 0; i < 2; i++) {
      for (const s of sides) await cannon({ url: `http://127.0.0.1:${s.http}`, request: productSubmit(stack), check: checks.submitted, connections: 64, duration: P.warmS });
    }
    const services = submitPath().filter((s) => s !== 'gateway');
    const procsWith = (gatewayKey) => ({
      gateway: stack.procs.get(gatewayKey),
      ...Object.fromEntries(services.map((s) => [s, stack.procs.get(s)])),
      events: stack.procs.get('events'),
    });
    const pgApps = [...submitPathWithDatabase(), 'events'];
    // Only the measured submits are logged between the two sizes (the other gateways are idle).
    const before = await requestLogSize(stack);
    // Shorter slices, twice as many and twice the time of the other experiments: on a shared machine
    // the drift between slices is larger than the few per cent measured here.
    const res = await interleave(
      sides.map((s) => ({
        name: s.name,
        url: `http://127.0.0.1:${s.http}`,
        request: productSubmit(stack),
        check: checks.submitted,
        measure: (fn) => cpuDuring(stack, { procs: procsWith(s.key), pgApps }, fn),
      })),
      // At least 1 s a slice: the smoke run's 0.75 s is near one submit's latency on a loaded machine.
      { rounds: P.rounds * 4, seconds: Math.max(1, P.concS / P.rounds / 2), connections: 64, before: () => settleBacklog(stack, since) },
    );
    const after = await requestLogSize(stack);
    const entries = after.entries - before.entries;
    const storage = { entries, bytes: after.bytes - before.bytes, bytesPerRequest: entries > 0 ? round((after.bytes - before.bytes) / entries, 1) : null };
    say(
      `64 connections, request log off: ${res.off.rps} req/s, ${res.off.cpuMsPerRequest?.total} ms CPU/req; ` +
        `on: ${res.on.rps} req/s, ${res.on.cpuMsPerRequest?.total} ms CPU/req (${round(res.on.cpuMsPerRequest.total / res.off.cpuMsPerRequest.total, 3)}×, goal ≤ 1.05); ` +
        `storage ${storage.bytesPerRequest} bytes/request over ${storage.entries} entries`,
    );
    return { off: res.off, on: res.on, storage };
  } finally {
    for (const s of sides) await stack.stopService(s.key);
  }
}
