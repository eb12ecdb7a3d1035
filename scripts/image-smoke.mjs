// Starts every service from a built image (buildah run --isolation chroot, as the image's non-root
// user 1000:1000, on the host's network) against the test PostgreSQL and NATS, in dependency order,
// and waits until each one's /readyz answers 200. Its own database (created and dropped) and NATS
// prefix (its streams deleted), ephemeral ports: it never collides with `npm start` or the tests.
//   node scripts/image-smoke.mjs IMAGE        (scripts/image-smoke.sh builds IMAGE and calls this)
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { launch, serviceEntry } from './lib/launch.mjs';
import { addressEnv, portVariables, processNames } from './lib/processes.mjs';

const image = process.argv[2];
if (!image) {
  console.error('usage: node scripts/image-smoke.mjs IMAGE');
  process.exit(2);
}
const { default: pg } = await import('pg');
const { connect } = await import('nats');

const SERVICES = processNames();
const READY_TIMEOUT_MS = Number(process.env.IMAGE_SMOKE_READY_TIMEOUT_MS ?? 120_000);
const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const id = randomBytes(4).toString('hex');
const dbName = `image_smoke_${id}`;
const prefix = `imgsmoke${id}`;
const dbUrl = new URL(PG_ADMIN_URL);
dbUrl.pathname = `/${dbName}`;

const env = {
  DATABASE_URL: dbUrl.toString(),
  NATS_URL,
  NATS_PREFIX: prefix,
  AUTH_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  AUTH_ISSUER: 'https://auth.uat.test',
  AUTH_SCOPES: 'api.uat.test/access',
  BASE_URL: 'https://api.uat.test',
  ENVIRONMENT: 'uat',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  DB_POOL_MAX: '2',
  // Every listener of every process (the registry's portEnv) on an ephemeral port.
  ...Object.fromEntries(portVariables().map((v) => [v, '0'])),
};
// Who dials whom: each service's announced gRPC port becomes its callers' <NAME>_GRPC_ADDR (the
// registry's order starts a process after those it calls); the gateway reads the JWKS from auth's
// HTTP port.
const publishes = (name, ports) => ({
  ...addressEnv(name, ports),
  ...(name === 'auth' ? { AUTH_JWKS_URL: `http://127.0.0.1:${ports.http}/.well-known/jwks.json` } : {}),
});

const buildah = (...args) => execFileSync('buildah', args, { encoding: 'utf8' }).trim();
const started = Date.now();
const since = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
const running = [];
let container;

async function startService(name) {
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  // tini like the image's ENTRYPOINT (buildah run does not apply ENTRYPOINT); -s: here it is not PID 1,
  // so it registers as the subreaper instead.
  const args = ['run', '--isolation', 'chroot', '--network', 'host', '--user', '1000:1000', ...envArgs, container, '--', '/usr/bin/tini', '-s', '--', 'node', serviceEntry(name)];
  // Its own process group, so cleanup stops buildah and everything under it.
  const proc = launch({ name, command: 'buildah', args, env: process.env, detached: true });
  running.push(proc);
  let timer;
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${name} did not announce its ports within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS)));
  try {
    return await Promise.race([proc.announced, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function readyz(name, opsPort) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
      if (r.status === 200) return;
      last = `${r.status} ${await r.text()}`;
    } catch (err) {
      last = err.message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} /readyz never answered 200 (last: ${last})`);
}

/** The uid the service's node process runs as (found in /proc by its command line and our prefix). */
function processUid(name) {
  const cmdline = `node\0${serviceEntry(name)}\0`;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'latin1') !== cmdline) continue;
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`NATS_PREFIX=${prefix}`)) continue;
      return /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return undefined;
}

/** Every process (tini, node) started in the container for this run: they carry our NATS prefix. */
function ourProcesses() {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`NATS_PREFIX=${prefix}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function signalAll(pids, signal) {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

async function cleanup() {
  // buildah run starts the container's processes in a session of their own: stop them by what they
  // carry (our prefix), not only through buildah's process group.
  signalAll(ourProcesses(), 'SIGTERM');
  for (const { child } of running.reverse()) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  }
  await Promise.all(
    running.map(
      ({ child }) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const t = setTimeout(() => {
            try {
              process.kill(-child.pid, 'SIGKILL');
            } catch {
              // Already gone.
            }
            resolve();
          }, 15_000);
          child.on('exit', () => (clearTimeout(t), resolve()));
        }),
    ),
  );
  for (let i = 0; i < 100 && ourProcesses().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  const left = ourProcesses();
  if (left.length > 0) {
    console.error(`image smoke: SIGKILL to ${left.length} process(es) that outlived SIGTERM: ${left.join(', ')}`);
    signalAll(left, 'SIGKILL');
  }
  if (container) {
    try {
      buildah('rm', container);
    } catch {
      // Nothing to remove.
    }
  }
  const nc = await connect({ servers: NATS_URL }).catch(() => undefined);
  if (nc) {
    const jsm = await nc.jetstreamManager();
    for await (const s of jsm.streams.list()) if (s.config.name.startsWith(`${prefix}_`)) await jsm.streams.delete(s.config.name);
    await nc.close();
  }
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}

let failed;
try {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  container = buildah('from', '--pull-never', '--quiet', image);
  const announced = {};
  for (const name of SERVICES) {
    const ports = await startService(name);
    announced[name] = ports;
    Object.assign(env, publishes(name, ports));
    await readyz(name, ports.ops);
    const uid = processUid(name);
    if (uid === undefined || uid === '0') throw new Error(`${name} runs as uid ${uid ?? 'unknown'}, not as the image's non-root user`);
    console.log(`  ${name.padEnd(10)} ready  uid=${uid}  ports=${JSON.stringify(ports)}  (${since()})`);
  }
  // The partner-facing listener answers from the image too: an unauthenticated call gets the API's
  // error envelope.
  const r = await fetch(`http://127.0.0.1:${announced.gateway.http}/v1/health`);
  const body = await r.json().catch(() => ({}));
  if (r.status !== 401 || body?.error?.code !== 'unauthenticated') throw new Error(`gateway GET /v1/health without a token answered ${r.status} ${JSON.stringify(body)}`);
  console.log(`  gateway    GET /v1/health without a token: 401 ${body.error.code}`);
  // The operator CLI runs from the image too (everything it imports is in it).
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  const product = buildah('run', '--isolation', 'chroot', '--network', 'host', '--user', '1000:1000', ...envArgs, container, '--', 'node', 'scripts/admin.mjs', 'product', 'add', '--id', randomUUID(), '--name', 'Image smoke');
  console.log(`  admin      product add: ${product.split('\n').at(-1)}`);
  console.log(`image smoke: all ${SERVICES.length} services ready from ${image} in ${since()}`);
} catch (err) {
  failed = err;
  console.error(`image smoke FAILED: ${err.message}`);
  const last = running.at(-1);
  if (last) console.error(`--- ${last.name} output ---\n${last.tail.join('\n')}`);
} finally {
  await cleanup();
}
process.exit(failed ? 1 : 0);
