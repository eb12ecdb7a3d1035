// Webhook signing secrets sealed at rest (issue 33; docs/webhooks.md "Signing secrets at rest"): the
// database holds no secret — read directly, every column of every table as text — whether the
// service made it, the partner brought it (its create job's payload drops it when the job settles),
// or a rotation moved it aside; deliveries still verify with the reference
// library (standardwebhooks); and a database from before sealing (migrations up to 0005, plaintext
// secrets) is sealed in place at the events service's next start, and still signs.
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { migrate } from '@partner/shared/db/pg';
import { newWebhookSecret } from '@partner/shared/domain/webhooks';
import { createLogger } from '@partner/shared/telemetry/logger';
import { MIGRATIONS_DIR, SCHEMA } from '../services/events/src/schema.js';
import { DROP_PLAINTEXT_MIGRATION, openSecret, secretMigrationSteps } from '../services/events/src/webhooks/secrets.js';
import { PRODUCT, provision, submissionBody } from './support/fixtures.js';
import { until } from './support/poll.js';
import { Receiver, useReceivers, type Received } from './support/receiver.js';
import type { Stack } from './support/stack.js';
import { useStack } from './support/use-stack.js';

const quiet = createLogger('test', 'silent');
const wait = { prefer: 'wait=20' };

/** Every form a secret could be stored in: as written, its key's base64, the key's bytes in hex (bytea as text), the text's hex. */
const formsOf = (secret: string): string[] => {
  const b64 = secret.slice('whsec_'.length);
  return [secret, b64, Buffer.from(b64, 'base64').toString('hex'), Buffer.from(secret, 'utf8').toString('hex')];
};

/** Every row of webhook_endpoints, all columns, as PostgreSQL renders them as text. */
const endpointRows = async (stack: Stack): Promise<string> =>
  (await stack.sql<{ row: string }>('SELECT w::text AS row FROM events.webhook_endpoints w ORDER BY endpoint_id')).map((r) => r.row).join('\n');

/** Every row of every table of the database (all schemas: job payloads, outboxes, events, …), as text. */
async function wholeDatabase(stack: Stack): Promise<string> {
  const tables = await stack.sql<{ t: string }>(
    "SELECT format('%I.%I', table_schema, table_name) AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')",
  );
  expect(tables.map((x) => x.t)).toEqual(expect.arrayContaining(['events.webhook_endpoints', 'job.jobs']));
  const dumps = await Promise.all(tables.map(async ({ t }) => (await stack.sql<{ row: string }>(`SELECT r::text AS row FROM ${t} r`)).map((x) => x.row).join('\n')));
  return dumps.join('\n');
}

function expectNoSecretIn(text: string, secrets: string[]): void {
  for (const secret of secrets) for (const form of formsOf(secret)) expect(text.includes(form), `a form of a secret (${form.slice(0, 12)}…) is stored`).toBe(false);
}

const signatures = (r: Received) => String(r.headers['webhook-signature']).split(' ');
const verify = (r: Received, secret: string) =>
  new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as { type: string };

describe('webhook signing secrets sealed at rest', () => {
  let token: string;
  const stack = useStack(async (stack) => {
    await stack.startAll({}, { dispatcher: true });
    token = await provision(stack);
  });
  const receiver = useReceivers();

  const create = async (url: string, extra: Record<string, unknown> = {}) => {
    const res = await stack.api('POST', '/v1/webhook-endpoints', { token, headers: wait, json: { url, eventTypes: ['submission.created'], ...extra } });
    expect(res.status, res.text).toBe(200);
    return res.body.endpointId as string;
  };
  const secretOf = async (id: string) => {
    const res = await stack.api('GET', `/v1/webhook-endpoints/${id}/secret`, { token });
    expect(res.status, res.text).toBe(200);
    return res.body.secret as string;
  };

  it('stores none: made by the service, brought by the partner, or rotated aside; deliveries still verify with standardwebhooks', async () => {
    const [ra, rb] = [await receiver(), await receiver()];
    const mine = newWebhookSecret();
    const a = await create(ra.url, { secret: mine });
    const b = await create(rb.url);
    const bBefore = await secretOf(b);
    const rotated = await stack.api('POST', `/v1/webhook-endpoints/${b}/secret/rotate`, { token, headers: wait });
    expect(rotated.status, rotated.text).toBe(200);
    const bAfter = await secretOf(b);
    expect(await secretOf(a)).toBe(mine);
    expect(bAfter).not.toBe(bBefore);

    const rows = await stack.sql<{ secret: string | null; previous_secret: string | null; sealed: boolean; previous_sealed: boolean }>(
      'SELECT secret, previous_secret, secret_sealed IS NOT NULL AS sealed, previous_secret_sealed IS NOT NULL AS previous_sealed FROM events.webhook_endpoints WHERE endpoint_id = ANY($1) ORDER BY endpoint_id = $2',
      [[a, b], b],
    );
    expect(rows).toEqual([
      { secret: null, previous_secret: null, sealed: true, previous_sealed: false },
      { secret: null, previous_secret: null, sealed: true, previous_sealed: true },
    ]);
    expectNoSecretIn(await endpointRows(stack), [mine, bBefore, bAfter]);
    // Nor anywhere else: the partner's own secret came in the create job's payload, which keeps it
    // only until the job settles.
    expectNoSecretIn(await wholeDatabase(stack), [mine, bBefore, bAfter]);

    const submitted = await stack.api('POST', '/v1/submissions', { token, headers: wait, json: submissionBody() });
    expect(submitted.status, submitted.text).toBe(200);
    const [ga] = await ra.waitFor('the delivery to a', (rs) => rs.length >= 1 && rs);
    const [gb] = await rb.waitFor('the delivery to b', (rs) => rs.length >= 1 && rs);
    expect(verify(ga!, mine).type).toBe('submission.created');
    // b mid-rotation: signed with both, each verifies.
    expect(signatures(gb!)).toHaveLength(2);
    expect(verify(gb!, bAfter).type).toBe('submission.created');
    expect(verify(gb!, bBefore).type).toBe('submission.created');
  });

  it("a blob copied to another endpoint does not open: its read fails and its deliveries are refused unsent, never signed with another endpoint's secret", async () => {
    const [ra, rb] = [await receiver(), await receiver()];
    const [a, b] = [await create(ra.url), await create(rb.url)];
    await stack.sql('UPDATE events.webhook_endpoints SET secret_sealed = (SELECT secret_sealed FROM events.webhook_endpoints WHERE endpoint_id = $1) WHERE endpoint_id = $2', [a, b]);
    const res = await stack.api('GET', `/v1/webhook-endpoints/${b}/secret`, { token });
    expect(res.status, res.text).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain('whsec_');
    expect(stack.logs.join('\n')).toMatch(/the signing secret of webhook endpoint we_[0-9a-f]{32} \(secret\) in the database is sealed with a key-encryption key this process does not have/);

    const submitted = await stack.api('POST', '/v1/submissions', { token, headers: wait, json: submissionBody() });
    expect(submitted.status, submitted.text).toBe(200);
    await ra.waitFor('the delivery to a, whose secret is its own', (rs) => rs.length >= 1);
    const [d] = await until('the delivery to b refused', async () => {
      const res = await stack.api('GET', `/v1/webhook-endpoints/${b}/deliveries`, { token });
      return res.body.items[0]?.lastError && res.body.items;
    });
    expect(d).toMatchObject({ status: 'pending', attempts: 1, lastError: "not sent: this endpoint's signing secret could not be read (a fault of the service, not of the receiver)" });
    expect(rb.received).toHaveLength(0);
    for (const id of [a, b]) await stack.api('DELETE', `/v1/webhook-endpoints/${id}`, { token, headers: wait });
  });
});

describe('webhook signing secrets stored in plaintext before sealing (a database at migration 0005)', () => {
  const tenant = 'tenant-sealing';
  const partner = 'partner-sealing';
  const ids = { live: `we_${'a'.repeat(32)}`, expired: `we_${'b'.repeat(32)}` };
  const plain = { current: newWebhookSecret(), previous: newWebhookSecret(), other: newWebhookSecret(), expired: newWebhookSecret() };
  let token: string;
  let r: Receiver;
  const stack = useStack(async (stack) => {
    r = await Receiver.start();
    // The events schema as it was before sealing, holding an endpoint mid-rotation (current and
    // previous secret in plaintext) and one whose previous secret's overlap has ended.
    const before = mkdtempSync(join(tmpdir(), 'events-migrations-0005-'));
    for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0006')) copyFileSync(join(MIGRATIONS_DIR, f), join(before, f));
    const pool = new pg.Pool({ connectionString: stack.env.DATABASE_URL, max: 1 });
    try {
      expect(await migrate(pool, SCHEMA, before, quiet)).toHaveLength(5);
      await pool.query(
        `INSERT INTO events.webhook_endpoints (endpoint_id, tenant_id, partner_id, url, event_types, secret, previous_secret, previous_secret_expires_at) VALUES
           ($1, $3, $4, $5, '{submission.created}', $6, $7, now() + interval '1 day'),
           ($2, $3, $4, $5, '{attachment.deleted}', $8, $9, now() - interval '1 second')`,
        [ids.live, ids.expired, tenant, partner, r.url, plain.current, plain.previous, plain.other, plain.expired],
      );
    } finally {
      await pool.end();
      rmSync(before, { recursive: true });
    }
    await stack.startAll({}, { dispatcher: true });
    await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test product');
    token = await stack.token(await stack.createClient({ tenant, partner }));
  });
  afterAll(async () => {
    await r?.stop();
  });

  const sealedColumns = () =>
    stack.sql<{ endpoint_id: string; secret: string | null; previous_secret: string | null; s: string | null; p: string | null }>(
      "SELECT endpoint_id, secret, previous_secret, encode(secret_sealed, 'hex') AS s, encode(previous_secret_sealed, 'hex') AS p FROM events.webhook_endpoints ORDER BY endpoint_id",
    );

  it('are sealed in place at the next start (an expired previous secret dropped), read back, and still sign', async () => {
    const rows = await sealedColumns();
    expect(rows.map((x) => [x.endpoint_id, x.secret, x.previous_secret, x.s !== null, x.p !== null])).toEqual([
      [ids.live, null, null, true, true],
      [ids.expired, null, null, true, false],
    ]);
    expectNoSecretIn(await endpointRows(stack), Object.values(plain));

    const read = await stack.api('GET', `/v1/webhook-endpoints/${ids.live}/secret`, { token });
    expect(read.body).toEqual({ secret: plain.current });
    const submitted = await stack.api('POST', '/v1/submissions', { token, headers: wait, json: submissionBody() });
    expect(submitted.status, submitted.text).toBe(200);
    const [got] = await r.waitFor('the delivery', (rs) => rs.length >= 1 && rs);
    expect(signatures(got!)).toHaveLength(2);
    expect(verify(got!, plain.current).type).toBe('submission.created');
    expect(verify(got!, plain.previous).type).toBe('submission.created');

    // Another start (a second replica, as a process: it seals before it announces its ports) finds
    // nothing to do: the sealed bytes stay as they are.
    const replica = await stack.spawnService('events', { AUTH_GRPC_ADDR: '127.0.0.1:9' });
    replica.kill('SIGKILL');
    await replica.exited;
    expect(await sealedColumns()).toEqual(rows);
  });
});

describe('the plaintext columns dropped (migration 0008; issue 48, 9)', () => {
  const tenant = 'tenant-drop';
  const partner = 'partner-drop';
  const id = `we_${'c'.repeat(32)}`;
  const plain = newWebhookSecret();
  const stack = useStack();

  /** The events schema at 0007 (the migrations before the drop), in a folder of its own. */
  const schemaBefore = async (): Promise<void> => {
    const dir = mkdtempSync(join(tmpdir(), 'events-migrations-0007-'));
    for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < DROP_PLAINTEXT_MIGRATION)) copyFileSync(join(MIGRATIONS_DIR, f), join(dir, f));
    const pool = new pg.Pool({ connectionString: stack.env.DATABASE_URL, max: 1 });
    try {
      await migrate(pool, SCHEMA, dir, quiet);
    } finally {
      await pool.end();
      rmSync(dir, { recursive: true });
    }
  };
  const columns = async () =>
    (await stack.sql<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_schema = 'events' AND table_name = 'webhook_endpoints' ORDER BY 1")).map(
      (r) => r.column_name,
    );

  it('refuses while a plaintext secret is left, and drops the columns once the migration step has sealed it', async () => {
    await schemaBefore();
    // A secret a version from before sealing wrote (during its rollout) after the last sealing start.
    await stack.sql(`INSERT INTO events.webhook_endpoints (endpoint_id, tenant_id, partner_id, url, event_types, secret) VALUES ($1, $2, $3, 'https://hooks.example.com/x', '{*}', $4)`, [
      id,
      tenant,
      partner,
      plain,
    ]);
    // Without its step (no key-encryption key to seal with): refused, nothing dropped, the secret kept.
    const pool = new pg.Pool({ connectionString: stack.env.DATABASE_URL, max: 1 });
    try {
      await expect(migrate(pool, SCHEMA, MIGRATIONS_DIR, quiet)).rejects.toThrow(/refusing to drop the plaintext webhook secret columns: 1 endpoint\(s\) still have a plaintext secret/);
      expect((await stack.sql('SELECT secret FROM events.webhook_endpoints WHERE endpoint_id = $1', [id]))[0]).toEqual({ secret: plain });
      expect(await stack.sql('SELECT 1 FROM events.schema_migrations WHERE version = $1', [DROP_PLAINTEXT_MIGRATION])).toEqual([]);

      // With it (the events service's start and `main.js migrate` pass it): sealed first, then dropped
      // (and the migrations after it applied).
      const kek = Buffer.from(stack.env.AUTH_KEY_ENCRYPTION_KEY!, 'base64');
      const fromTheDrop = readdirSync(MIGRATIONS_DIR)
        .filter((f) => f.endsWith('.sql') && f >= DROP_PLAINTEXT_MIGRATION)
        .sort()
        .map((f) => f.replace(/\.sql$/, ''));
      expect(fromTheDrop[0]).toBe(DROP_PLAINTEXT_MIGRATION);
      expect(await migrate(pool, SCHEMA, MIGRATIONS_DIR, quiet, secretMigrationSteps([kek]))).toEqual(fromTheDrop);
    } finally {
      await pool.end();
    }
    const [row] = await stack.sql<{ s: Buffer; secret: string | null }>('SELECT secret_sealed AS s, secret FROM events.webhook_endpoints WHERE endpoint_id = $1', [id]);
    expect(openSecret([Buffer.from(stack.env.AUTH_KEY_ENCRYPTION_KEY!, 'base64')], id, 'secret', row!.s)).toBe(plain);
    expect(row!.secret).toBeNull();
    expectNoSecretIn(await endpointRows(stack), [plain]);
    // What stands in for the previous version's statements during the rollout holds nothing but NULL.
    await expect(stack.sql('UPDATE events.webhook_endpoints SET secret = $2 WHERE endpoint_id = $1', [id, plain])).rejects.toThrow(/webhook_endpoints_no_plaintext_secret/);
    await expect(stack.sql('UPDATE events.webhook_endpoints SET previous_secret = $2 WHERE endpoint_id = $1', [id, plain])).rejects.toThrow(/no_plaintext_previous_secret/);
    // The previous version's statements still run: its rotation writes NULL there, its reads get NULL.
    await stack.sql('UPDATE events.webhook_endpoints SET secret = NULL, previous_secret = NULL WHERE endpoint_id = $1', [id]);
  });

  it('works on a schema with no plaintext column at all (the next release drops the stand-ins): create, read, rotate, sign, seal at start', async () => {
    // The stand-ins gone as the next release's migration will drop them.
    await stack.sql('ALTER TABLE events.webhook_endpoints DROP COLUMN secret, DROP COLUMN previous_secret');
    expect(await columns()).not.toEqual(expect.arrayContaining(['secret']));
    expect(await columns()).not.toEqual(expect.arrayContaining(['previous_secret']));
    await stack.startAll({}, { dispatcher: true });
    await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test product');
    const token = await stack.token(await stack.createClient({ tenant, partner }));
    const r = await Receiver.start();
    try {
      const created = await stack.api('POST', '/v1/webhook-endpoints', { token, headers: wait, json: { url: r.url, eventTypes: ['submission.created'] } });
      expect(created.status, created.text).toBe(200);
      const ep = created.body.endpointId as string;
      const before = (await stack.api('GET', `/v1/webhook-endpoints/${ep}/secret`, { token })).body.secret as string;
      const rotated = await stack.api('POST', `/v1/webhook-endpoints/${ep}/secret/rotate`, { token, headers: wait });
      expect(rotated.status, rotated.text).toBe(200);
      const after = (await stack.api('GET', `/v1/webhook-endpoints/${ep}/secret`, { token })).body.secret as string;
      expect(after).not.toBe(before);
      // The endpoint sealed by the migration step opens too.
      expect((await stack.api('GET', `/v1/webhook-endpoints/${id}/secret`, { token })).body).toEqual({ secret: plain });

      const submitted = await stack.api('POST', '/v1/submissions', { token, headers: wait, json: submissionBody() });
      expect(submitted.status, submitted.text).toBe(200);
      const [got] = await r.waitFor('the delivery', (rs) => rs.length >= 1 && rs);
      expect(signatures(got!)).toHaveLength(2);
      expect(verify(got!, after).type).toBe('submission.created');
      expect(verify(got!, before).type).toBe('submission.created');

      // Another events replica starts (its sealing at start reads the rows without the columns) and
      // changes nothing.
      const sealedBefore = await stack.sql("SELECT endpoint_id, encode(secret_sealed, 'hex') AS s, encode(previous_secret_sealed, 'hex') AS p FROM events.webhook_endpoints ORDER BY 1");
      const replica = await stack.spawnService('events', { AUTH_GRPC_ADDR: '127.0.0.1:9' });
      replica.kill('SIGKILL');
      await replica.exited;
      expect(await stack.sql("SELECT endpoint_id, encode(secret_sealed, 'hex') AS s, encode(previous_secret_sealed, 'hex') AS p FROM events.webhook_endpoints ORDER BY 1")).toEqual(sealedBefore);
    } finally {
      await r.stop();
    }
  });
});
