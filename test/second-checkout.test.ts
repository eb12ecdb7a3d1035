// A second checkout on the same machine (issue 35; README "A second checkout"): `npm start` reads, before
// it builds, whether the database's signing keys are sealed under this checkout's key-encryption key;
// when they are another's it takes a database and NATS prefix of the checkout's own (on the defaults)
// or names exactly which DATABASE_URL and NATS_PREFIX to set, never telling anyone to delete keys; the
// settings it was given are saved in .local/dev.env, which the admin CLI reads too.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
