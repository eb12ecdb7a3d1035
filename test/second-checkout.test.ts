// A second checkout on the same machine (issue 35; README "A second checkout"): `npm start` reads, before
// it builds, whether the database's signing keys are sealed under this checkout's key-encryption key;
// when they are another's it takes a database and NATS prefix of the checkout's own (on the defaults)
// or names exactly which DATABASE_URL and NATS_PREFIX to set, never telling anyone to delete keys; the
// settings it was given are saved in .local/dev.env, which the admin CLI reads too, but only once they
// were accepted (issue 49, 6).
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { EnvReader } from '@partner/shared/config/env';
import { createLogger } from '@partner/shared/telemetry/logger';
import { readAuthConfig } from '../services/auth/src/config.js';
import { startAuth } from '../services/auth/src/app.js';
import { checkoutNames, foreignDatabasePlan, signingKeysOwner, withDatabase } from '../scripts/lib/checkout-db.mjs';
import { readDevEnv, updateDevEnv } from '../scripts/lib/dev-env.mjs';
import { runProcess } from './support/run.js';
import { ROOT } from './support/stack.js';
import { useStack } from './support/use-stack.js';

const dir = mkdtempSync(join(tmpdir(), 'second-checkout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm start: a database sealed under another checkout\'s key', () => {
  const stack = useStack();

  it('tells its own key (ours), another key (foreign) and a database without signing keys (empty) apart', async () => {
    const c = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await c.connect();
    try {
      expect(await signingKeysOwner(c, stack.env.AUTH_KEY_ENCRYPTION_KEY)).toBe('empty');
      const auth = await startAuth(readAuthConfig(new EnvReader({ ...stack.env })), { logger: createLogger('test', 'silent') });
      await auth.stop();
      const other = randomBytes(32).toString('base64');
      expect(await signingKeysOwner(c, stack.env.AUTH_KEY_ENCRYPTION_KEY)).toBe('ours');
      expect(await signingKeysOwner(c, `${other},${stack.env.AUTH_KEY_ENCRYPTION_KEY}`)).toBe('ours');
      expect(await signingKeysOwner(c, other)).toBe('foreign');
      expect(await signingKeysOwner(c, undefined)).toBe('foreign');
    } finally {
      await c.end();
    }
  });

  it('switches to names of the checkout\'s own on the defaults, and otherwise says exactly what to set; never to delete keys', () => {
    const names = checkoutNames('/home/dev/second-clone/');
    expect(names).toEqual(checkoutNames('/home/dev/second-clone/'));
    expect(names.database).toMatch(/^partner_[0-9a-f]{8}$/);
    expect(checkoutNames('/home/dev/first-clone/').database).not.toBe(names.database);
    const chosen = { DATABASE_URL: withDatabase('postgres://postgres@127.0.0.1:5432/partner', names.database), NATS_PREFIX: names.natsPrefix };
    expect(chosen.DATABASE_URL).toBe(`postgres://postgres@127.0.0.1:5432/${names.database}`);

    const auto = foreignDatabasePlan({ dbName: 'partner', explicit: [], chosen });
    expect(auto.switchTo).toEqual(chosen);
    expect(auto.note).toContain(`this checkout uses database ${names.database} and NATS prefix ${names.natsPrefix}`);
    const told = foreignDatabasePlan({ dbName: 'partner', explicit: ['DATABASE_URL'], chosen });
    expect(told.switchTo).toBeUndefined();
    expect(told.fail).toContain(`DATABASE_URL=${chosen.DATABASE_URL} NATS_PREFIX=${names.natsPrefix} npm start`);
    for (const text of [auto.note, told.fail]) expect(text).not.toMatch(/delete|DELETE|drop/i);
  });
});

describe('.local/dev.env', () => {
  it('keeps what npm start was given (replacing the old value, keeping every other line), for the admin CLI to read', () => {
    const file = join(dir, 'dev.env');
    writeFileSync(file, '# Written by `npm start` on first run; local development only.\nAUTH_KEY_ENCRYPTION_KEY=abc=\nDATABASE_URL=postgres://old/partner\n');
    expect(updateDevEnv({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/partner_b', NATS_PREFIX: 'partner_b' }, file)).toEqual(['DATABASE_URL', 'NATS_PREFIX']);
    expect(updateDevEnv({ NATS_PREFIX: 'partner_b' }, file)).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(
      '# Written by `npm start` on first run; local development only.\nAUTH_KEY_ENCRYPTION_KEY=abc=\nDATABASE_URL=postgres://postgres@127.0.0.1:5432/partner_b\nNATS_PREFIX=partner_b\n',
    );
    expect(readDevEnv(file)).toEqual({ AUTH_KEY_ENCRYPTION_KEY: 'abc=', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/partner_b', NATS_PREFIX: 'partner_b' });
  });
});

/**
 * A clone of its own for `npm start` (scripts/start.mjs as it is, with its scripts/lib and the registry), whose build
 * stands in: it prints `stand-in build` and fails, so a run that got past the checks of where the
 * checkout's services meet stops right there, before anything is started. Its node_modules are the
 * repository's, newer than its lockfile (no `npm ci`).
 */
function standInClone(): string {
  const clone = mkdtempSync(join(dir, 'clone-'));
  cpSync(join(ROOT, 'scripts'), join(clone, 'scripts'), { recursive: true });
  mkdirSync(join(clone, 'services'));
  cpSync(join(ROOT, 'services/processes.json'), join(clone, 'services/processes.json')); // the registry scripts/lib reads
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  writeFileSync(join(clone, 'package-lock.json'), '{}\n');
  utimesSync(join(clone, 'package-lock.json'), new Date(0), new Date(0));
  const build = "node -e \"console.log('stand-in build'); process.exit(3)\"";
  writeFileSync(join(clone, 'package.json'), JSON.stringify({ name: 'stand-in-clone', private: true, scripts: { build } }));
  mkdirSync(join(clone, '.local'));
  return clone;
}

describe('npm start in a clone: a refused DATABASE_URL is not saved', () => {
  // The database of another checkout: its signing keys sealed under a key the clone does not have.
  const stack = useStack(async (s) => {
    const auth = await startAuth(readAuthConfig(new EnvReader({ ...s.env })), { logger: createLogger('test', 'silent') });
    await auth.stop();
  });
  let ownDatabase: string | undefined;
  afterAll(async () => {
    if (!ownDatabase) return;
    const admin = new pg.Client({ connectionString: withDatabase(stack.env.DATABASE_URL, 'postgres') });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${ownDatabase} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });

  it('refuses the other checkout\'s database without saving it; the command it prints is saved once accepted, and a plain npm start then uses it', async () => {
    const clone = standInClone();
    const devEnv = join(clone, '.local/dev.env');
    const start = (env: Record<string, string>) =>
      runProcess(process.execPath, [join(clone, 'scripts/start.mjs')], { cwd: clone, env: { PATH: process.env.PATH ?? '', HOME: clone, ...env } });

    const refused = await start({ DATABASE_URL: stack.env.DATABASE_URL, NATS_PREFIX: stack.env.NATS_PREFIX! });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain('holds signing keys sealed under a key-encryption key this checkout does not have');
    expect(refused.stdout).not.toContain('saved');
    expect(refused.stdout).not.toContain('stand-in build');
    expect(Object.keys(readDevEnv(devEnv))).toEqual(['AUTH_KEY_ENCRYPTION_KEY']);

    // The same again: refused the same way, still nothing saved (before the fix, a plain start was
    // refused too, from what the first one had saved).
    const again = await start({ DATABASE_URL: stack.env.DATABASE_URL });
    expect(again.code).toBe(1);
    expect(Object.keys(readDevEnv(devEnv))).toEqual(['AUTH_KEY_ENCRYPTION_KEY']);

    // The command the refusal prints is accepted, and then saved.
    const told = /DATABASE_URL=(\S+) NATS_PREFIX=(\S+) npm start/.exec(refused.stderr);
    expect(told, refused.stderr).not.toBeNull();
    const [, url, prefix] = told as unknown as [string, string, string];
    expect(url).toBe(withDatabase(stack.env.DATABASE_URL, checkoutNames(`${clone}/`).database));
    ownDatabase = new URL(url).pathname.slice(1);
    const accepted = await start({ DATABASE_URL: url, NATS_PREFIX: prefix });
    expect(accepted.stdout, accepted.stderr).toContain('› saved DATABASE_URL, NATS_PREFIX in .local/dev.env');
    expect(accepted.stdout).toContain('stand-in build');
    expect(readDevEnv(devEnv)).toMatchObject({ DATABASE_URL: url, NATS_PREFIX: prefix });

    // A plain `npm start` now takes the saved settings and gets past the checks.
    const plain = await start({});
    expect(plain.stderr).not.toContain('holds signing keys');
    expect(plain.stdout).not.toContain('saved');
    expect(plain.stdout).toContain('stand-in build');
  });
});
