// What grpc-js costs per message, unary against a long-lived bidirectional stream carrying the same
// messages (issue 20, part 2), measured in this one process (client and server together, so CPU per
// call is the whole transport cost of one hop). Messages are opaque 400-byte buffers, as big as a
// SubmitJob, so only the transport is compared, not protobuf encoding.
import { createRequire } from 'node:module';
import { ROOT } from './stack.mjs';
import { round, summarize } from './load.mjs';

const require = createRequire(`${ROOT}services/shared/package.json`);
const grpc = require('@grpc/grpc-js');

const identity = { requestSerialize: (b) => b, requestDeserialize: (b) => b, responseSerialize: (b) => b, responseDeserialize: (b) => b };
const SERVICE = {
  Call: { path: '/bench.Transport/Call', requestStream: false, responseStream: false, ...identity },
  Pipe: { path: '/bench.Transport/Pipe', requestStream: true, responseStream: true, ...identity },
};

async function run(label, concurrency, n, once) {
  const latencies = [];
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const s = performance.now();
        await once();
        latencies.push(performance.now() - s);
      }
    }),
  );
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    label,
    concurrency,
    calls: n,
    callsPerS: round((n * 1000) / wall, 0),
    cpuMsPerCall: round((cpu.user + cpu.system) / 1000 / n, 4),
    latencyMs: summarize(latencies),
  };
}

export async function grpcTransport({ n = 5_000 } = {}) {
  const server = new grpc.Server();
  server.addService(SERVICE, {
    Call: (call, cb) => cb(null, call.request),
    Pipe: (stream) => {
      stream.on('data', (m) => stream.write(m));
      stream.on('end', () => stream.end());
    },
  });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const Client = grpc.makeGenericClientConstructor(SERVICE, 'Transport');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.enable_channelz': 0 });
  const body = () => Buffer.alloc(400, 7);

  const unary = () =>
    new Promise((resolve, reject) => client.Call(body(), { deadline: Date.now() + 5_000 }, (err, res) => (err ? reject(err) : resolve(res))));

  // One stream; each message carries its id in its first 4 bytes, and the answer is matched by it.
  const stream = client.Pipe();
  const waiting = new Map();
  stream.on('data', (m) => {
    const id = m.readUInt32BE(0);
    waiting.get(id)?.();
    waiting.delete(id);
  });
  let seq = 0;
  const streamed = () =>
    new Promise((resolve) => {
      const id = ++seq >>> 0;
      const b = body();
      b.writeUInt32BE(id, 0);
      waiting.set(id, resolve);
      stream.write(b);
    });

  const results = [];
  // Warm both paths first (JIT, the channel, the stream's HTTP/2 windows).
  await run('warm', 8, 2_000, unary);
  await run('warm', 8, 2_000, streamed);
  for (const c of [1, 32]) {
    results.push(await run('unary', c, n, unary));
    results.push(await run('stream', c, n, streamed));
    results.push(await run('unary', c, n, unary));
    results.push(await run('stream', c, n, streamed));
  }
  stream.end();
  client.close();
  await new Promise((resolve) => server.tryShutdown(resolve));

  // Each (kind, concurrency) measured twice in alternation: keep the mean of the two.
  const merged = {};
  for (const r of results) {
    const k = `${r.label}@${r.concurrency}`;
    merged[k] ??= { label: r.label, concurrency: r.concurrency, runs: [] };
    merged[k].runs.push(r);
  }
  const out = Object.values(merged).map((m) => ({
    label: m.label,
    concurrency: m.concurrency,
    callsPerS: round(m.runs.reduce((a, r) => a + r.callsPerS, 0) / m.runs.length, 0),
    cpuMsPerCall: round(m.runs.reduce((a, r) => a + r.cpuMsPerCall, 0) / m.runs.length, 4),
    p50Ms: round(m.runs.reduce((a, r) => a + r.latencyMs.p50, 0) / m.runs.length, 3),
  }));
  const at = (label, c) => out.find((x) => x.label === label && x.concurrency === c);
  return {
    results: out,
    streamCpuRatio: { c1: round(at('stream', 1).cpuMsPerCall / at('unary', 1).cpuMsPerCall, 2), c32: round(at('stream', 32).cpuMsPerCall / at('unary', 32).cpuMsPerCall, 2) },
  };
}

// Standalone: node bench/lib/grpc-transport.mjs [calls]
if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await grpcTransport({ n: Number(process.argv[2] ?? 5_000) });
  console.table(r.results);
  console.log('stream CPU / unary CPU:', r.streamCpuRatio);
}
