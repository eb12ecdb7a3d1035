// Load generation with autocannon (programmatic API). Every response goes through a check, and
// latencies are taken from autocannon's per-response event (hrtime, sub-millisecond) rather than its
// integer-millisecond histogram, so percentiles of ~1–2 ms requests stay meaningful.
import autocannon from 'autocannon';

/** Nearest-rank percentile of a sorted array. */
export function pct(sorted, q) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1));
  return sorted[i];
}

export function summarize(values) {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return { n: s.length, p50: round(pct(s, 50)), p90: round(pct(s, 90)), p99: round(pct(s, 99)), max: round(s.at(-1) ?? NaN), mean: round(mean) };
}

export const round = (x, digits = 3) => (Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : null);

/** Wall-clock milliseconds with sub-millisecond resolution, calibrated against Date.now() at a ms edge. */
let offset;
export function calibrateClock() {
  const start = Date.now();
  let now;
  while ((now = Date.now()) === start) {
    // spin to the next millisecond edge
  }
  offset = now - performance.now();
}
export function wallNow() {
  if (offset === undefined) calibrateClock();
  return offset + performance.now();
}

/**
 * One autocannon run. request: {method, path, headers, body, setup?(context) -> {headers?, body?}}.
 * check(status, body, context) -> true when the response is what the product promises.
 * onRecord(context, status, body) is called for every response (context carries what setup stored).
 */
export async function cannon({ url, request, check, connections, duration, amount, timeoutS = 20, onRecord, keepLatencies = false }) {
  const latencies = [];
  let ok = 0;
  let bad = 0;
  const badSamples = [];
  const req = {
    method: request.method ?? 'GET',
    path: request.path,
    headers: request.headers ?? {},
    ...(request.body !== undefined ? { body: request.body } : {}),
    onResponse: (status, body, context) => {
      if (check(status, body, context)) ok++;
      else {
        bad++;
        if (badSamples.length < 5) badSamples.push({ status, body: String(body).slice(0, 300) });
      }
      onRecord?.(context, status, body);
    },
  };
  if (request.setup) {
    req.setupRequest = (r, context) => {
      const extra = request.setup(context) ?? {};
      return { ...r, headers: { ...request.headers, ...extra.headers }, ...(extra.body !== undefined ? { body: extra.body } : {}) };
    };
  }
  const opts = {
    url,
    connections,
    timeout: timeoutS,
    requests: [req],
    ...(amount ? { amount } : { duration }),
  };
  const started = performance.now();
  const instance = autocannon(opts);
  instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  const result = await instance;
  const seconds = (performance.now() - started) / 1000;
  const errors = result.errors + result.timeouts + bad;
  return {
    connections,
    requests: latencies.length,
    ok,
    errors,
    transportErrors: result.errors,
    timeouts: result.timeouts,
    badResponses: bad,
    badSamples,
    seconds: round(seconds),
    rps: round(ok / (amount ? seconds : result.duration), 1),
    latencyMs: summarize(latencies),
    ...(keepLatencies ? { rawLatencies: latencies } : {}),
  };
}

/**
 * Runs several targets in alternating slices (A B C A B C …) and merges each target's slices, so
 * that noise from other work on a shared machine falls on every target alike. A target may wrap
 * its slices (measure(fn) → {result, cpuMs}) to also sum the CPU its processes spend. before(), when
 * given, runs ahead of every slice, unmeasured (e.g. to let the last slice's backlog settle).
 */
export async function interleave(targets, { rounds, seconds, connections, before }) {
  const acc = Object.fromEntries(
    targets.map((t) => [t.name, { ok: 0, errors: 0, transportErrors: 0, timeouts: 0, badResponses: 0, badSamples: [], seconds: 0, lat: [], cpuMs: {} }]),
  );
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      await before?.();
      const run = () => cannon({ url: t.url, request: t.request, check: t.check, connections, duration: seconds, keepLatencies: true });
      const { result, cpuMs } = t.measure ? await t.measure(run) : { result: await run(), cpuMs: undefined };
      const a = acc[t.name];
      for (const k of ['ok', 'errors', 'transportErrors', 'timeouts', 'badResponses']) a[k] += result[k];
      a.seconds += seconds;
      // A loop, not push(...): a fast target's slice holds more latencies than call arguments may number.
      for (const l of result.rawLatencies) a.lat.push(l);
      a.badSamples.push(...result.badSamples.slice(0, 2));
      for (const [k, v] of Object.entries(cpuMs ?? {})) a.cpuMs[k] = (a.cpuMs[k] ?? 0) + v;
    }
  }
  return Object.fromEntries(
    Object.entries(acc).map(([name, a]) => {
      const out = {
        connections,
        rounds,
        requests: a.lat.length,
        ok: a.ok,
        errors: a.errors,
        transportErrors: a.transportErrors,
        timeouts: a.timeouts,
        badResponses: a.badResponses,
        badSamples: a.badSamples.slice(0, 3),
        seconds: a.seconds,
        rps: round(a.ok / a.seconds, 1),
        latencyMs: summarize(a.lat),
      };
      if (Object.keys(a.cpuMs).length) {
        const per = Object.fromEntries(Object.entries(a.cpuMs).map(([k, v]) => [k, round(v / a.ok, 3)]));
        per.total = round(Object.values(a.cpuMs).reduce((x, y) => x + y, 0) / a.ok, 3);
        out.cpuMsPerRequest = per;
      }
      return [name, out];
    }),
  );
}
