// Runs a built image as the chart does and checks it: every process in a chroot of the image's root
// filesystem, bind-mounted READ-ONLY in a mount namespace of its own, with a tmpfs /tmp (the chart's
// emptyDir), as the image's non-root user 1000:1000, with the image's environment and workdir, on the
// host's network. First `main.js migrate` of every schema owner (the chart's hook Jobs), then every
// service against the test PostgreSQL and NATS, in dependency order, until each one's /readyz
// answers 200. Its own database (created and dropped) and NATS prefix (its streams deleted),
// ephemeral ports: it never collides with `npm start` or the tests.
//   node scripts/image-smoke.mjs IMAGE        (scripts/image-smoke.sh builds IMAGE and calls this)
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, serviceEntry } from './lib/launch.mjs';
import { addressEnv, PROCESSES, portVariables, processNames, schemaOwners } from './lib/processes.mjs';

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
let rootfs;
let mountpoint;
let imageEnv = {};
let workdir = '/';
let user;

// In a mount namespace of its own: the image's root bind-mounted read-only on MOUNTPOINT, a tmpfs on
// /tmp (the chart's emptyDir, 64 MiB), /proc and /dev; then chroot as the image's USER (1000:1000)
// into its workdir and exec tini like the image's ENTRYPOINT (-s: not PID 1 here, so it registers as
// the subreaper).
const IN_IMAGE = `set -e
root="$1"; ro="$2"; workdir="$3"; user="$4"; shift 4
mount --bind "$root" "$ro"
mount -o remount,bind,ro "$ro"
mount -t tmpfs -o size=64m,mode=1777,nosuid,nodev tmpfs "$ro/tmp"
mount -t proc proc "$ro/proc"
mount --rbind /dev "$ro/dev"
exec chroot --userspec="$user" "$ro" /usr/bin/env --chdir="$workdir" /usr/bin/tini -s -- "$@"`;

/** command/args/env that run `node …args` inside the image, read-only (see IN_IMAGE). */
function inImage(args) {
  return {
    command: 'unshare',
    args: ['--mount', '--propagation', 'private', '--', 'sh', '-c', IN_IMAGE, 'image-smoke', rootfs, mountpoint, workdir, user, 'node', ...args],
    env: { ...imageEnv, ...env },
  };
}

/** Runs `node …args` in the image to its end; its output, or a failure with it. */
function runInImage(what, args) {
  const { command, args: argv, env: runEnv } = inImage(args);
  const r = spawnSync(command, argv, { env: runEnv, encoding: 'utf8', timeout: READY_TIMEOUT_MS });
  if (r.status !== 0) throw new Error(`${what} exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout).slice(-2000)}`);
  return r.stdout.trim();
}

async function startService(name) {
  const { command, args, env: runEnv } = inImage([serviceEntry(name)]);
  // Its own process group, so cleanup stops unshare and everything under it.
  const proc = launch({ name, command, args, env: runEnv, detached: true });
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
      buildah('umount', container);
      buildah('rm', container);
    } catch {
      // Nothing to remove.
    }
  }
  if (mountpoint) {
    try {
      rmdirSync(mountpoint);
    } catch {
      // Already gone.
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
  rootfs = buildah('mount', container);
  mountpoint = mkdtempSync(join(tmpdir(), 'partner-image-smoke-root-'));
  const config = JSON.parse(buildah('inspect', '--type', 'image', image)).OCIv1.config;
  imageEnv = Object.fromEntries((config.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  workdir = config.WorkingDir || '/';
  user = config.User;
  if (!/^[1-9]\d*:\d+$/.test(user ?? '')) throw new Error(`the image's USER is ${JSON.stringify(user)}, not a numeric non-root uid:gid`);

  // The runtime: Node 22 (the image's), and a root filesystem nothing can write but /tmp.
  const version = runInImage('node --version', ['-p', 'process.versions.node']);
  const wanted = process.env.IMAGE_SMOKE_NODE_VERSION;
  if (!version.startsWith('22.') || (wanted && version !== wanted)) throw new Error(`the image runs Node ${version}, not ${wanted ?? '22'}`);
  const fsCheck = runInImage('the read-only check', [
    '-e',
    `const fs = require('node:fs');
     let root = 'writable';
     try { fs.writeFileSync('/app/smoke-probe', 'x'); } catch (e) { root = e.code; }
     fs.writeFileSync('/tmp/smoke-probe', 'x');
     console.log(JSON.stringify({ root, tmp: fs.readFileSync('/tmp/smoke-probe', 'utf8'), uid: process.getuid() }));`,
  ]);
  const fsState = JSON.parse(fsCheck);
  if (fsState.root !== 'EROFS' || fsState.tmp !== 'x' || fsState.uid !== 1000) throw new Error(`the image's filesystem is not what the chart gives it: ${fsCheck}`);
  console.log(`  runtime    Node ${version}, root filesystem ${fsState.root}, /tmp writable, uid ${fsState.uid}  (${since()})`);

  // The hook Jobs' command, for every schema owner, on the read-only root: it must need no more.
  const migrated = [];
  for (const name of schemaOwners()) {
    runInImage(`${name} migrate`, [serviceEntry(name), 'migrate']);
    migrated.push(PROCESSES[name].schema);
  }
  const check = new pg.Client({ connectionString: env.DATABASE_URL });
  await check.connect();
  for (const schema of migrated) {
    const r = await check.query(`SELECT count(*)::int AS n FROM "${schema}".schema_migrations`);
    if (!(r.rows[0].n > 0)) throw new Error(`${schema}: main.js migrate applied nothing`);
  }
  await check.end();
  console.log(`  migrate    ${migrated.join(', ')}: applied from the image  (${since()})`);

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
  // The operator CLI runs from the image too (everything it imports is in it), read-only like the rest.
  const product = runInImage('admin product add', ['scripts/admin.mjs', 'product', 'add', '--id', randomUUID(), '--name', 'Image smoke']);
  console.log(`  admin      product add: ${product.split('\n').at(-1)}`);
  console.log(`image smoke: all ${SERVICES.length} services ready from ${image} on Node ${version}, read-only root, in ${since()}`);
} catch (err) {
  failed = err;
  console.error(`image smoke FAILED: ${err.message}`);
  const last = running.at(-1);
  if (last) console.error(`--- ${last.name} output ---\n${last.tail.join('\n')}`);
} finally {
  await cleanup();
}
process.exit(failed ? 1 : 0);
