// Helpers for the admin CLI (`npm run -s admin -- <group> <command> ...`): every command prints one
// JSON object on stdout; bad arguments print a message on stderr and exit with status 2.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EnvReader } from '../config/env.js';
import { readDb } from './config.js';
import { createLogger } from '../telemetry/logger.js';
import { createPool, migrate, type Pool } from '../db/pg.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export class UsageError extends Error {}

export type CommandHandler = (argv: string[]) => Promise<object>;
/** Commands of a group, e.g. { create: ..., disable: ... } for `client`. */
export type CommandGroup = Record<string, { usage: string; run: CommandHandler }>;

export function parseFlags<const O extends Options>(
  argv: string[],
  options: O,
): { values: { [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string }; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { values: values as never, positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
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

export async function runGroup(groupName: string, group: CommandGroup, argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const entry = command ? group[command] : undefined;
  if (!entry) {
    process.stderr.write(
      `usage:\n${Object.values(group)
        .map((c) => `  ${c.usage}`)
        .join('\n')}\n${command ? `unknown command: ${groupName} ${command}\n` : ''}`,
    );
    return 2;
  }
  try {
    const out = await entry.run(rest);
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\nusage: ${entry.usage}\n`);
      return 2;
    }
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
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
