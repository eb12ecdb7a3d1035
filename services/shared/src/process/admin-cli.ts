// The admin CLI's machinery (`npm run -s admin -- <group> <command> ...`): every command prints one
// JSON object on stdout; bad arguments print a message on stderr and exit with status 2. Each command
// is declared with its summary, its options (each with what it means), its arguments and the format
// of a file it reads: runGroup parses the command line with exactly those options and prints the help
// (`--help`, `-h`, `help`) from the same declaration, so a command cannot take an option its help
// does not name.
import { parseArgs } from 'node:util';
import { EnvReader } from '../config/env.js';
import { readDb } from './config.js';
import { createLogger } from '../telemetry/logger.js';
import { createPool, migrate, type Pool } from '../db/pg.js';

export class UsageError extends Error {}

/** A command's result printed as JSON Lines (one JSON value per line, none for an empty list) instead of one object. */
export class JsonLines {
  constructor(readonly items: readonly unknown[]) {}
}

/** How the admin CLI is run, the start of every usage line. */
export const ADMIN = 'npm run -s admin --';

/** One option of a command: its type, the placeholder its value is shown with, what it means. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** The value's placeholder in the help (string options): T, ID, N. */
  value?: string;
  /** What the option means, for --help (required: a command cannot have an undocumented option). */
  help: string;
}
export type OptionSpecs = Record<string, OptionSpec>;

export type FlagValues<O extends OptionSpecs> = { [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string };

/** A file a command reads: its format in words, and an example a test checks the parser accepts. */
export interface FileFormat {
  /** The argument it is given as: FILE.json. */
  name: string;
  /** The format, one line per part. */
  format: string[];
  /** A complete example of the file's content. */
  example: string;
}

export interface AdminCommand<O extends OptionSpecs = OptionSpecs> {
  /** The command line after `npm run -s admin --`, e.g. `client create --tenant T ...`. */
  usage: string;
  /** What the command does and what it prints, in a sentence or two. */
  summary: string;
  options: O;
  /** The positional arguments, in order. */
  args?: { name: string; help: string }[];
  /** The file the command reads, if any. */
  file?: FileFormat;
  examples?: string[];
  run(input: { values: FlagValues<O>; positionals: string[] }): Promise<object>;
}

/** Declares a command: `values` in run is typed by its options. */
export function command<const O extends OptionSpecs>(def: AdminCommand<O>): AdminCommand {
  return def as unknown as AdminCommand;
}

/** A group (`client`, `product`, ...): what it is about, and its commands by name ("requirements set" for two words). */
export interface CommandGroup {
  summary: string;
  commands: Record<string, AdminCommand>;
}

/** The options in the form parseArgs takes, with -h/--help. */
function parseOptions(options: OptionSpecs) {
  return { ...Object.fromEntries(Object.entries(options).map(([name, o]) => [name, { type: o.type }])), help: { type: 'boolean', short: 'h' } } as const;
}

export function parseFlags(argv: string[], options: OptionSpecs): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: parseOptions(options) as never, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

const wantsHelp = (argv: string[]): boolean => argv.includes('--help') || argv.includes('-h');

function columns(rows: [string, string][], indent = '  '): string[] {
  const width = Math.max(0, ...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `${indent}${a.padEnd(width)}  ${b}`);
}

/** `npm run -s admin -- <group> <command> --help`: usage, summary, options, arguments, the file's format, examples. */
export function commandHelp(c: AdminCommand): string {
  const lines = [`Usage: ${ADMIN} ${c.usage}`, '', c.summary];
  if (c.args?.length) lines.push('', 'Arguments:', ...columns(c.args.map((a) => [a.name, a.help])));
  lines.push(
    '',
    'Options:',
    ...columns([
      ...Object.entries(c.options).map(([o, spec]): [string, string] => [`--${o}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`, spec.help]),
      ['-h, --help', 'this help'],
    ]),
  );
  if (c.file) {
    lines.push('', `${c.file.name}:`, ...c.file.format.map((l) => `  ${l}`), '', `  Example ${c.file.name}:`, ...c.file.example.trimEnd().split('\n').map((l) => `    ${l}`));
  }
  if (c.examples?.length) lines.push('', 'Examples:', ...c.examples.map((e) => `  ${ADMIN} ${e}`));
  lines.push('', 'Prints one JSON object on stdout; exit 2 for a wrong command line, 1 when the command fails.');
  return `${lines.join('\n')}\n`;
}

/** `npm run -s admin -- <group> --help`: the group's commands and their summaries. */
export function groupHelp(groupName: string, group: CommandGroup): string {
  return [
    `Usage: ${ADMIN} ${groupName} <command> [options]`,
    '',
    group.summary,
    '',
    'Commands:',
    ...columns(Object.entries(group.commands).map(([n, c]) => [n, c.summary])),
    '',
    `Run \`${ADMIN} ${groupName} <command> --help\` for a command's options${Object.values(group.commands).some((c) => c.file) ? ' and the format of the file it reads' : ''}.`,
    '',
  ].join('\n');
}

/** `npm run -s admin -- --help` (or no arguments): every group, its summary and commands. */
export function overviewHelp(groups: Record<string, CommandGroup>): string {
  return [
    `Usage: ${ADMIN} <group> <command> [options]`,
    '',
    'Operator commands: they work on the services\' database directly (DATABASE_URL; the running services are',
    'not needed) and print one JSON object on stdout. Local defaults come from .local/dev.env (npm start).',
    '',
    'Groups:',
    ...columns(Object.entries(groups).map(([n, g]) => [n, `${g.summary} (${Object.keys(g.commands).join(', ')})`])),
    '',
    `Run \`${ADMIN} <group> --help\` for its commands, \`${ADMIN} <group> <command> --help\` for a command's options.`,
    '',
  ].join('\n');
}

/** Where the CLI writes: the process's stdout and stderr, or a test's. */
export interface AdminIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** The command argv names (its one or two words) and the arguments after them; undefined when none matches. */
function resolve(group: CommandGroup, argv: string[]): { name: string; entry: AdminCommand; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const entry = argv.length >= words && Object.hasOwn(group.commands, name) ? group.commands[name] : undefined;
    if (entry) return { name, entry, rest: argv.slice(words) };
  }
  return undefined;
}

/**
 * Runs `<command> [args]` of a group: its help (`--help`, `-h`, `help [command]`, or no command at
 * all) on stdout with exit 0; the command's JSON output on stdout with exit 0; a wrong command line on
 * stderr with exit 2 and a hint to --help; any other failure on stderr with exit 1.
 */
export async function runGroup(groupName: string, group: CommandGroup, argv: string[], io: AdminIo = process): Promise<number> {
  const out = (text: string) => void io.stdout.write(text);
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || (argv[0] === 'help' && argv.length === 1)) {
    out(groupHelp(groupName, group));
    return 0;
  }
  const asked = argv[0] === 'help' ? argv.slice(1) : argv;
  const found = resolve(group, asked);
  if (!found) {
    // The first word of two-word commands (`product requirements`): its help, or which commands it starts.
    const started = Object.keys(group.commands).filter((n) => n.startsWith(`${asked[0]} `));
    if (started.length > 0 && (argv[0] === 'help' || wantsHelp(asked))) {
      out(started.length === 1 ? commandHelp(group.commands[started[0]!]!) : groupHelp(groupName, group));
      return 0;
    }
    const words = asked[0]?.startsWith('-') ? '' : asked.filter((a) => !a.startsWith('-')).slice(0, 2).join(' ');
    io.stderr.write(
      `${started.length > 0 ? `incomplete command: ${groupName} ${asked[0]} (${started.map((n) => `${groupName} ${n}`).join(', ')})` : words ? `unknown command: ${groupName} ${words}` : `give a command: ${groupName} <command>`}\n` +
        `commands: ${Object.keys(group.commands).join(', ')}\nRun \`${ADMIN} ${groupName} --help\` for what each does.\n`,
    );
    return 2;
  }
  const { name, entry, rest } = found;
  if (argv[0] === 'help' || wantsHelp(rest)) {
    out(commandHelp(entry));
    return 0;
  }
  try {
    const { values, positionals } = parseFlags(rest, entry.options);
    if (positionals.length > (entry.args?.length ?? 0)) throw new UsageError(`unexpected argument: ${positionals[entry.args?.length ?? 0]}`);
    const result = await entry.run({ values: values as never, positionals });
    if (result instanceof JsonLines) io.stdout.write(result.items.map((item) => `${JSON.stringify(item)}\n`).join(''));
    else io.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`error: ${err.message}\nusage: ${ADMIN} ${entry.usage}\nRun \`${ADMIN} ${groupName} ${name} --help\` for its options.\n`);
      return 2;
    }
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

/**
 * The whole admin CLI: `<group> <command> ...`, or the overview (`--help`, `-h`, `help`, or no
 * arguments) on stdout with exit 0; `help <group> [command]` is `<group> [command] --help`; an
 * unknown group is exit 2 naming the groups.
 */
export async function runAdmin(groups: Record<string, CommandGroup>, argv: string[], io: AdminIo = process): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || (first === 'help' && rest.length === 0)) {
    io.stdout.write(overviewHelp(groups));
    return 0;
  }
  if (first === 'help') return runAdmin(groups, [...rest, ...(rest.length === 1 ? [] : ['--help'])], io);
  const group = Object.hasOwn(groups, first) ? groups[first] : undefined;
  if (!group) {
    io.stderr.write(`unknown group: ${first}\ngroups: ${Object.keys(groups).join(', ')}\nRun \`${ADMIN} --help\` for what each does.\n`);
    return 2;
  }
  return runGroup(first, group, rest, io);
}

export function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v.trim();
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

export function identifier(value: string, what: string): string {
  if (!ID.test(value)) throw new UsageError(`${what} "${value}" must be 1-128 of letters, digits and . _ : @ - (starting with a letter or digit)`);
  return value;
}

/**
 * Runs an admin command against a service's own schema: a small pool from DATABASE_URL, the
 * schema's migrations applied first (so commands work on a fresh database), closed afterwards.
 */
export async function withAdminPool<T>(service: { name: string; schema: string; migrationsDir: string }, fn: (pool: Pool) => Promise<T>): Promise<T> {
  const env = new EnvReader();
  const db = env.done(readDb(env));
  const logger = createLogger(`${service.name}-admin`, 'warn', process.stderr as never);
  const pool = createPool({ url: db.databaseUrl, schema: service.schema, max: 2, applicationName: `${service.name}-admin`, logger, timeouts: db.timeouts });
  try {
    await migrate(pool, service.schema, service.migrationsDir, logger);
    return await fn(pool);
  } finally {
    await pool.end();
  }
}
