// The admin CLI's interface: one JSON object per command on stdout, usage errors on stderr with exit 2
// and a pointer to --help; --help (or help, or nothing) at every level on stdout with exit 0, for every
// group and every command, naming each option and the format of the file a command reads.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandGroup } from '@partner/shared/process/admin-cli';
import { GROUP_SERVICES, loadAdminGroups } from '../scripts/lib/admin-groups.mjs';
import { ROOT } from './support/stack.js';
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
  [['client', 'toString'], /unknown command: client toString/],
  [['product', 'add', 'stray', '--id', '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b', '--name', 'x'], /unexpected argument: stray/],
])('refuses %j with a message on stderr and exit 2', async (args, message) => {
  const r = await stack.adminRaw(...args);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(message);
  expect(r.stderr).toContain('--help');
});

/** The groups as scripts/admin.mjs loads them (built: the tests build first), and every command of them, the receipt-key group's included. */
const { groups, receiptKeys } = await loadAdminGroups(ROOT);
const commands = [
  ...Object.entries(groups).flatMap(([g, group]) => Object.entries(group.commands).map(([name, c]) => ({ g, name, c, groups, extra: [] as string[] }))),
  ...Object.entries(receiptKeys.commands).map(([name, c]) => ({ g: 'key', name, c, groups: { ...groups, key: receiptKeys }, extra: ['--receipts'] })),
];

it("loads the module of the service that declares a command's group, and only that one", async () => {
  const { byService } = await loadAdminGroups(ROOT);
  const declared = Object.fromEntries(Object.entries(byService).flatMap(([service, gs]) => Object.keys(gs).map((g) => [g, service])));
  expect(GROUP_SERVICES).toEqual(declared);
  for (const [group, service] of Object.entries(GROUP_SERVICES)) {
    const loaded = await loadAdminGroups(ROOT, [group, 'anything']);
    expect(Object.keys(loaded.byService), group).toEqual([service]);
    expect(loaded.receiptKeys).toBeUndefined();
  }
  const receipts = await loadAdminGroups(ROOT, ['key', 'rotate', '--receipts']);
  expect([Object.keys(receipts.groups), receipts.receiptKeys]).toEqual([[], receiptKeys]);
  for (const argv of [[], ['--help'], ['nothing']]) expect(Object.keys((await loadAdminGroups(ROOT, argv)).byService)).toEqual(['auth', 'policy', 'submission']);
});

describe('help', () => {
  /** Runs the admin CLI in this process (the walk over every command), collecting what it writes. */
  async function inProcess(groups: Record<string, CommandGroup>, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const { runAdmin } = await loadAdminGroups(ROOT);
    let stdout = '';
    let stderr = '';
    const code = await runAdmin(groups, argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
    return { code, stdout, stderr };
  }

  it.each([[[]], [['--help']], [['-h']], [['help']]])('the script with %j prints every group and its commands on stdout, exit 0', async (args) => {
    const r = await stack.adminRaw(...args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^Usage: npm run -s admin -- <group> <command>/);
    for (const [name, group] of Object.entries(groups)) {
      expect(r.stdout).toMatch(new RegExp(`^  ${name} +`, 'm'));
      for (const command of Object.keys(group.commands)) expect(r.stdout).toContain(command);
    }
  });

  it('the script answers a group and a command with --help, help and -h on stdout, exit 0; an unknown one exits 2 pointing to --help', async () => {
    for (const args of [['client', '--help'], ['client', 'help'], ['client'], ['help', 'client']]) {
      const r = await stack.adminRaw(...args);
      expect([r.code, r.stderr], args.join(' ')).toEqual([0, '']);
      expect(r.stdout).toMatch(/^Usage: npm run -s admin -- client <command>/);
      expect(r.stdout).toContain('revoke-tokens');
    }
    for (const args of [['client', 'create', '--help'], ['client', 'create', '-h'], ['help', 'client', 'create'], ['client', 'help', 'create'], ['product', 'requirements', 'set', '--help']]) {
      const r = await stack.adminRaw(...args);
      expect([r.code, r.stderr], args.join(' ')).toEqual([0, '']);
      expect(r.stdout).toMatch(/^Usage: npm run -s admin -- (client create --tenant T|product requirements set --id)/);
    }
    // `key rotate --receipts` is the submission service's: its help too.
    const receipts = await stack.adminRaw('key', 'rotate', '--receipts', '--help');
    expect(receipts.code).toBe(0);
    expect(receipts.stdout).toContain('receipt-keys.json');
    for (const [args, message] of [
      [['--bogus'], /unknown group: --bogus/],
      [['client', 'frobnicate'], /unknown command: client frobnicate/],
      [['product', 'requirements'], /incomplete command: product requirements \(product requirements set\)/],
    ] as const) {
      const r = await stack.adminRaw(...args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/Run `npm run -s admin -- (client |product )?--help`/);
    }
  });

  it.each(commands.map((x) => [`${x.g} ${x.name}${x.extra.map((e) => ` ${e}`).join('')}`, x] as const))('%s --help names its usage, every option with what it means, and the format of the file it reads', async (_, { g, name, c, groups: chosen, extra }) => {
    for (const argv of [[g, ...name.split(' '), ...extra, '--help'], ['help', g, ...name.split(' ')]]) {
      if (extra.length && argv[0] === 'help') continue;
      const r = await inProcess(chosen, argv);
      expect([r.code, r.stderr], argv.join(' ')).toEqual([0, '']);
      expect(r.stdout).toContain(`Usage: npm run -s admin -- ${c.usage}\n`);
      expect(r.stdout).toContain(c.summary);
      expect(c.summary.length).toBeGreaterThan(20);
      for (const [option, spec] of Object.entries(c.options)) {
        expect(spec.help.length, `--${option}`).toBeGreaterThan(5);
        expect(r.stdout).toMatch(new RegExp(`^  --${option}${spec.type === 'string' ? ` \\S+` : ''} +${escape(spec.help)}$`, 'm'));
      }
      for (const a of c.args ?? []) expect(r.stdout).toContain(a.name);
      if (c.file) {
        for (const line of c.file.format) expect(r.stdout).toContain(line);
        for (const line of c.file.example.trimEnd().split('\n')) expect(r.stdout).toContain(`    ${line}\n`);
      }
    }
  });

  it('every group answers --help with its commands and what each does', async () => {
    for (const [g, group] of [...Object.entries(groups), ['key', receiptKeys] as const]) {
      const r = await inProcess({ ...groups, [g]: group }, [g, '--help']);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(r.stdout).toContain(group.summary);
      for (const [name, c] of Object.entries(group.commands)) expect(r.stdout).toMatch(new RegExp(`^  ${escape(name)} +${escape(c.summary)}$`, 'm'));
    }
  });
});

it("README.md's admin table has a row for every command", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('### Admin CLI'), readme.indexOf('### Configuration'));
  for (const { g, name, extra } of commands) expect(table).toMatch(new RegExp(`^\\|[^\\n]*\`${escape([g, name, ...extra].join(' '))}[ \`]`, 'm'));
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
