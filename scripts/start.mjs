#!/usr/bin/env node
// `npm start`: runs the whole system on this machine. Installs dependencies if missing, builds,
// makes sure PostgreSQL and NATS JetStream are reachable (starting a local nats-server if it is
// installed), starts every service as its own process on loopback ports, seeds demo data on first
// start, prints the URLs and demo credentials, and stops everything cleanly on Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { demoPolicies, toJsonl } from './demo/policies.mjs';
import { DEMO_PRODUCT, DEMO_RATING_PLAN, DEMO_REQUIREMENTS, isDemoBeforeRisk, requiresNothing } from './demo/product.mjs';
import { checkoutNames, foreignDatabasePlan, signingKeysOwner, withDatabase } from './lib/checkout-db.mjs';
import { DEV_ENV_FILE, readDevEnv, SHARED_SETTINGS, updateDevEnv } from './lib/dev-env.mjs';
import { banner } from './lib/banner.mjs';
import { launch } from './lib/launch.mjs';
import { PROCESSES, processNames } from './lib/processes.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const local = `${root}.local`;
const say = (msg) => process.stdout.write(`${msg}\n`);
const fail = (msg) => {
  process.stderr.write(`\n✖ ${msg}\n`);
  process.exit(1);
};

function run(cmd, args, what) {
  say(`› ${what}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) fail(`${what} failed (${cmd} ${args.join(' ')})`);
}

// 1. Dependencies and build.
const lock = `${root}package-lock.json`;
const installed = `${root}node_modules/.package-lock.json`;
if (!existsSync(installed) || statSync(lock).mtimeMs > statSync(installed).mtimeMs) {
  run('npm', ['ci', '--no-audit', '--no-fund'], 'installing dependencies (npm ci)');
}
// 2. Local settings, kept across restarts in .local/ (git-ignored).
mkdirSync(local, { recursive: true });
const devEnvFile = DEV_ENV_FILE;
if (!existsSync(devEnvFile)) {
  writeFileSync(
    devEnvFile,
    [
      '# Written by `npm start` on first run; local development only.',
      "# The key-encryption key: seals auth's token keys, the submission service's receipt keys and the webhook signing secrets.",
      `AUTH_KEY_ENCRYPTION_KEY=${randomBytes(32).toString('base64')}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
}
const fileEnv = readDevEnv(devEnvFile);
const env = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/partner',
  NATS_URL: 'nats://127.0.0.1:4222',
  NATS_PREFIX: 'partner',
  BASE_URL: 'http://127.0.0.1:8080',
  AUTH_ISSUER: 'http://127.0.0.1:8081',
  ENVIRONMENT: 'uat',
  LOG_LEVEL: 'info',
  // Local development: webhook endpoints may point at a receiver on this machine's loopback (nothing
  // else private; never in a deployment).
  WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true',
  ...fileEnv,
  ...process.env,
};

// What the environment sets for where this checkout's services meet is remembered, so `npm run admin`
// (and the next `npm start`) use the same without it being set again, but only once it was accepted:
// DATABASE_URL and NATS_PREFIX when the database is reachable and not another checkout's, NATS_URL
// when NATS answers. A refused setting is never saved (issue 49, 6): the next plain `npm start` would
// be refused the same way.
const given = Object.fromEntries(SHARED_SETTINGS.filter((name) => process.env[name]).map((name) => [name, process.env[name]]));
function remember(names) {
  const accepted = Object.fromEntries(Object.entries(given).filter(([name]) => names.includes(name)));
  const saved = updateDevEnv(accepted, devEnvFile);
  if (saved.length > 0) say(`› saved ${saved.join(', ')} in .local/dev.env (npm run admin reads them too)`);
}

// 3. PostgreSQL: reachable, with the database created, and its signing keys this checkout's (before
// the build, so a refusal comes at once).
const { default: pg } = await import('pg');

/** Creates the database of this URL if it does not exist; fails with what to install when unreachable. */
async function ensureDatabase(url) {
  const dbName = new URL(url).pathname.replace(/^\//, '') || 'partner';
  const adminUrl = new URL(url);
  adminUrl.pathname = '/postgres';
  try {
    const c = new pg.Client({ connectionString: adminUrl.toString(), connectionTimeoutMillis: 3000 });
    await c.connect();
    const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
    if (exists.rowCount === 0) {
      if (!/^[a-z_][a-z0-9_]*$/.test(dbName)) fail(`database name ${dbName} must be a plain identifier`);
      await c.query(`CREATE DATABASE ${dbName}`);
      say(`› created database ${dbName}`);
    }
    await c.end();
  } catch (err) {
    fail(
      `PostgreSQL is not reachable at ${adminUrl.host} (${err.message}).\n` +
        '  Install and start it, e.g. on Debian/Ubuntu:\n' +
        '    sudo apt-get install -y postgresql && sudo pg_ctlcluster $(ls /etc/postgresql) main start\n' +
        '  then allow the connection (trust or a password in DATABASE_URL), or set DATABASE_URL.',
    );
  }
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await c.connect();
  try {
    return { dbName, owner: await signingKeysOwner(c, env.AUTH_KEY_ENCRYPTION_KEY) };
  } finally {
    await c.end();
  }
}

const mine = checkoutNames(root);
const chosen = { DATABASE_URL: withDatabase(env.DATABASE_URL, mine.database), NATS_PREFIX: mine.natsPrefix };
const checked = await ensureDatabase(env.DATABASE_URL);
if (checked.owner === 'foreign') {
  const explicit = ['DATABASE_URL', 'NATS_PREFIX'].filter((name) => process.env[name] || fileEnv[name]);
  const plan = foreignDatabasePlan({ dbName: checked.dbName, explicit, chosen });
  if (plan.fail) fail(plan.fail);
  // On the defaults: this checkout takes a database and NATS prefix of its own, and remembers them
  // once that database is found to be its own (or new).
  Object.assign(env, plan.switchTo);
  say(`› ${plan.note}`);
  const own = await ensureDatabase(env.DATABASE_URL);
  if (own.owner === 'foreign') fail(foreignDatabasePlan({ dbName: own.dbName, explicit: ['DATABASE_URL'], chosen }).fail);
  updateDevEnv(plan.switchTo, devEnvFile);
}
remember(['DATABASE_URL', 'NATS_PREFIX']);

run('npm', ['run', '-s', 'build'], 'building (protos + TypeScript)');

// 4. NATS with JetStream: reachable, or started from a local nats-server binary.
const children = [];
const natsUrl = new URL(env.NATS_URL.split(',')[0]);
const reachable = (host, port) =>
  new Promise((resolve) => {
    const s = createConnection({ host, port: Number(port) }, () => {
      s.end();
      resolve(true);
    });
    s.on('error', () => resolve(false));
    s.setTimeout(1500, () => {
      s.destroy();
      resolve(false);
    });
  });
if (!(await reachable(natsUrl.hostname, natsUrl.port || 4222))) {
  const bin = ['nats-server', '/usr/sbin/nats-server', '/usr/local/bin/nats-server'].find(
    (b) => spawnSync(b, ['--version'], { stdio: 'ignore' }).status === 0,
  );
  if (!bin) {
    fail(
      `NATS is not reachable at ${natsUrl.host}.\n` +
        '  Install nats-server (Debian/Ubuntu: sudo apt-get install -y nats-server) and run it with JetStream:\n' +
        '    nats-server -js -a 127.0.0.1 -p 4222\n' +
        '  or set NATS_URL to a NATS server with JetStream enabled.',
    );
  }
  mkdirSync(`${local}/nats`, { recursive: true });
  say(`› starting ${bin} -js on ${natsUrl.hostname}:${natsUrl.port || 4222}`);
  const nats = spawn(bin, ['-js', '-a', natsUrl.hostname, '-p', natsUrl.port || '4222', '-sd', `${local}/nats`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push({ name: 'nats-server', child: nats });
  for (let i = 0; i < 50 && !(await reachable(natsUrl.hostname, natsUrl.port || 4222)); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
}
remember(['NATS_URL']);

// 5. Services, each its own process, started in the registry's order (services/processes.json: a
// process after those it calls), on the ports its config defaults to (the registry's, checked by
// test/registry.test.ts).
const rawLogs = process.env.LOG_FORMAT === 'json';
let stopping = false;

function pretty(name, line) {
  if (rawLogs) return `${line}`;
  try {
    const { level, msg, time, service, ...rest } = JSON.parse(line);
    void time;
    void service;
    const extra = Object.entries(rest)
      .filter(([k]) => !['pid', 'hostname'].includes(k))
      .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
      .join(' ');
    return `\x1b[${PROCESSES[name].logColor}m${name.padEnd(10)}\x1b[0m ${level === 'info' ? '' : `${level.toUpperCase()} `}${msg} ${extra}`;
  } catch {
    return `${name.padEnd(10)} ${line}`;
  }
}

// The token server serves the one environment this runs, the banner's scope: its refusal of another
// scope names only that one (unless AUTH_SCOPES is set).
env.AUTH_SCOPES ??= `${new URL(env.BASE_URL).host}/access`;

async function startService(name) {
  const proc = launch({
    name,
    env,
    onLine: (line) => say(pretty(name, line)),
    onStderr: (text) => process.stderr.write(`${name.padEnd(10)} ${text}`),
  });
  children.push({ name, child: proc.child });
  let ready = false;
  void proc.exited.then((code) => {
    if (ready && !stopping) {
      say(`✖ ${name} exited (${code}); stopping everything`);
      void stopAll(1);
    }
  });
  await proc.announced;
  ready = true;
}

async function stopAll(exitCode = 0) {
  if (stopping) return;
  stopping = true;
  say('\n› stopping…');
  for (const { name, child } of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    await new Promise((resolve) => {
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      child.kill('SIGTERM');
    });
    say(`  stopped ${name}`);
  }
  process.exit(exitCode);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  for (const name of processNames()) await startService(name);
} catch (err) {
  process.stderr.write(`✖ ${err.message}\n`);
  await stopAll(1);
}

// 6. Demo data on first start (or when the database was reset): the demo client, principal, product
// (with its requirements, scripts/demo/product.mjs) and policies.
const SCOPE = `${new URL(env.BASE_URL).host}/access`;
const demoFile = `${local}/demo.json`;
const admin = (...args) => {
  const r = spawnSync(process.execPath, [`${root}scripts/admin.mjs`, ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`admin ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
/** An access token for the demo client, or undefined when its credentials are refused. */
async function tokenFor(demo) {
  const res = await fetch(`${env.AUTH_ISSUER}/oauth2/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${demo.clientId}:${demo.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: `grant_type=client_credentials&scope=${encodeURIComponent(SCOPE)}`,
  });
  return res.ok ? (await res.json()).access_token : undefined;
}
const DEMO_PERMISSIONS = 'health/read,policies/read,products/read,submissions/read,submissions/write,jobs/read,events/read,webhooks/read,webhooks/write,quotes/read,quotes/write';
let demo = existsSync(demoFile) ? JSON.parse(readFileSync(demoFile, 'utf8')) : undefined;
if (demo && (await tokenFor(demo).catch(() => false))) {
  // A demo client from an earlier version: give it the permissions added since (events/read, webhooks/*, products/read).
  try {
    admin('client', 'permissions', '--client', demo.clientId, '--permissions', DEMO_PERMISSIONS);
  } catch (err) {
    say(`  (demo client permissions not updated: ${err.message.trim()})`);
  }
} else {
  say('› seeding demo data');
  const client = admin('client', 'create', '--tenant', 'demo', '--partner', 'demo-partner', '--name', 'Demo client', '--permissions', DEMO_PERMISSIONS);
  admin('principal', 'add', '--tenant', 'demo', '--partner', 'demo-partner', '--principal', 'demo-broker');
  admin('product', 'add', '--id', DEMO_PRODUCT.id, '--name', DEMO_PRODUCT.name);
  // Dated relative to today (scripts/demo/policies.mjs), so `active` policies are in force now.
  const policies = `${local}/demo-policies.jsonl`;
  writeFileSync(policies, toJsonl(demoPolicies()));
  try {
    admin('policy', 'import', '--tenant', 'demo', '--partner', 'demo-partner', policies);
  } catch (err) {
    say(`  (demo policies not imported: ${err.message.trim()})`);
  }
  demo = { clientId: client.clientId, clientSecret: client.clientSecret, tenant: 'demo', partnerId: 'demo-partner', principalId: 'demo-broker', productId: DEMO_PRODUCT.id };
  writeFileSync(demoFile, JSON.stringify(demo, null, 2), { mode: 0o600 });
}
// What the demo product requires (a loss run and risk data), read as a partner reads it: set when it
// requires nothing (just added, or seeded before it had requirements) or only the loss run (seeded
// before it had risk data); an operator's own requirements stand, and a second start changes nothing.
try {
  const token = await tokenFor(demo);
  const res = await fetch(`${env.BASE_URL}/v1/products/${DEMO_PRODUCT.id}/requirements`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /v1/products/${DEMO_PRODUCT.id}/requirements answered ${res.status}`);
  const current = await res.json();
  if (requiresNothing(current) || isDemoBeforeRisk(current)) {
    const file = `${local}/demo-requirements.json`;
    writeFileSync(file, `${JSON.stringify(DEMO_REQUIREMENTS, null, 2)}\n`);
    admin('product', 'requirements', 'set', '--id', DEMO_PRODUCT.id, file);
    say('› the demo product now requires a loss run and risk data (scripts/demo/product.mjs)');
  }
} catch (err) {
  say(`  (demo product requirements not set: ${err.message.trim()})`);
}

// The demo product's rating plan (so the walkthrough can quote): set when it has none; an operator's
// plan stands, and a second start bumps no ratingVersion.
try {
  if (admin('product', 'rating', 'show', '--id', DEMO_PRODUCT.id).ratingVersion === null) {
    const file = `${local}/demo-rating-plan.json`;
    writeFileSync(file, `${JSON.stringify(DEMO_RATING_PLAN, null, 2)}\n`);
    const { ratingVersion } = admin('product', 'rating', 'set', '--id', DEMO_PRODUCT.id, file);
    say(`› the demo product has a rating plan (ratingVersion ${ratingVersion}, scripts/demo/product.mjs)`);
  }
} catch (err) {
  say(`  (demo product rating plan not set: ${err.message.trim()})`);
}

const rule = '─'.repeat(78);
say(`\n${rule}\n${banner({ env, scope: SCOPE, demo })}\n${rule}`);
