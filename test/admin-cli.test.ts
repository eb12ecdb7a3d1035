// The admin CLI's interface: one JSON object per command on stdout, usage errors on stderr with exit 2.
import { expect, it } from 'vitest';
import { useStack } from './support/use-stack.js';

const stack = useStack();

it('creates a client with a secret shown once and stored only as a hash', async () => {
  const out = await stack.admin('client', 'create', '--tenant', 't1', '--partner', 'p1', '--permissions', 'health/read,jobs/read', '--name', 'Broker A');
  expect(Object.keys(out).sort()).toEqual(['clientId', 'clientSecret', 'partnerId', 'permissions', 'tenant']);
  expect(out).toMatchObject({ tenant: 't1', partnerId: 'p1', permissions: ['health/read', 'jobs/read'] });
  const rows = await stack.sql<Record<string, unknown>>('SELECT * FROM auth.clients WHERE client_id = $1', [out.clientId]);
  expect(JSON.stringify(rows)).not.toContain(out.clientSecret);
  const changed = await stack.admin('client', 'permissions', '--client', out.clientId, '--permissions', 'health/read');
  expect(changed.permissions).toEqual(['health/read']);
});

it.each([
  [['client', 'create', '--tenant', 't1', '--partner', 'p1'], /--permissions is required/],
  [['client', 'create', '--tenant', 't1', '--partner', 'p1', '--permissions', 'health/read,root'], /unknown permission\(s\) root/],
  [['client', 'create', '--tenant', 'bad tenant', '--partner', 'p1', '--permissions', 'health/read'], /tenant "bad tenant"/],
  [['client', 'frobnicate'], /unknown command: client frobnicate/],
  [['nothing'], /unknown group: nothing/],
  [['product', 'add', '--id', 'not-a-uuid', '--name', 'x'], /--id must be a UUID/],
  [['principal', 'add', '--partner', 'nobody-known', '--principal', 'x'], /unknown partner nobody-known/],
  [['client', 'create', '--bogus'], /Unknown option '--bogus'/],
])('refuses %j with a message on stderr and exit 2', async (args, message) => {
  const r = await stack.adminRaw(...args);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(message);
});
