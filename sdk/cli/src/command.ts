// What every `partner` command is made of: the exit codes, the options, the command and context
// types, and the helpers several commands share (reading input, running a mutation, one or all pages).
import { readFileSync } from 'node:fs';
import { PartnerTimeoutError, type DocumentType, type JobHandle, type MutationOptions, type Page, type PartnerClient, type PolicyStatus } from '@partner/sdk';
import type { Settings } from './config.js';
import type { Output, Progress, Io } from './output.js';

export const EXIT = {
  ok: 0,
  /** The API refused the request, or the job failed, and retrying will not help. */
  apiError: 1,
  /** The command line is wrong. */
  usage: 2,
  /** A failure that may pass: the service unavailable or rate limited, the network, a wait that ran out. */
  retryable: 3,
  /** Not logged in, credentials or scope refused, or the client lacks a permission. */
  auth: 4,
  interrupted: 130,
} as const;

export class UsageError extends Error {
  /** Whether "Run partner --help for usage." follows: not when the message itself says what to do. */
  readonly usageHint: boolean;
  constructor(message: string, opts: { usageHint?: boolean } = {}) {
    super(message);
    this.usageHint = opts.usageHint ?? true;
  }
}

export const OPTIONS = {
  json: { type: 'boolean' },
  'read-only': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  principal: { type: 'string' },
  'base-url': { type: 'string' },
  'auth-url': { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret-stdin': { type: 'boolean' },
  scope: { type: 'string' },
  status: { type: 'string' },
  'product-id': { type: 'string' },
  'policy-number': { type: 'string' },
  'updated-since': { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean' },
  file: { type: 'string', short: 'f' },
  wait: { type: 'string' },
  'idempotency-key': { type: 'string' },
  type: { type: 'string' },
  'content-type': { type: 'string' },
  output: { type: 'string', short: 'o' },
  force: { type: 'boolean' },
  timeout: { type: 'string' },
  types: { type: 'string' },
  since: { type: 'string' },
  'from-start': { type: 'boolean' },
  kind: { type: 'string' },
  'created-since': { type: 'string' },
  'created-before': { type: 'string' },
  'external-ref': { type: 'string' },
  'principal-id': { type: 'string' },
  profile: { type: 'string' },
  debug: { type: 'boolean' },
  data: { type: 'string', short: 'd' },
  header: { type: 'string', short: 'H', multiple: true },
  include: { type: 'boolean', short: 'i' },
  url: { type: 'string' },
  description: { type: 'string' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  event: { type: 'string' },
  'forward-to': { type: 'string' },
  secret: { type: 'string' },
  reason: { type: 'string' },
  note: { type: 'string' },
  clearance: { type: 'string' },
  active: { type: 'string' },
  validate: { type: 'boolean' },
  submission: { type: 'string' },
  'after-seq': { type: 'string' },
  jwks: { type: 'string' },
  'from-seq': { type: 'string' },
  prev: { type: 'string' },
  offer: { type: 'string' },
  download: { type: 'string' },
  option: { type: 'string', multiple: true },
  'request-id': { type: 'string' },
  time: { type: 'string' },
  name: { type: 'string' },
  clock: { type: 'string' },
} as const;

export type OptionName = keyof typeof OPTIONS;
export type Values = {
  [K in OptionName]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[] : (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string;
};

export const GLOBAL: OptionName[] = ['json', 'help', 'version', 'principal', 'profile', 'debug'];

export interface Command {
  usage: string;
  summary: string;
  /** Worked examples, shown by `partner <command> --help` (at least one). */
  examples: [string, ...string[]];
  args: string[];
  /** How many of the last args may be left out (default none). */
  optionalArgs?: number;
  options: OptionName[];
  run(ctx: Context, args: string[]): Promise<number>;
}

export interface Context {
  io: Io;
  values: Values;
  out: Output;
  progress: Progress;
  signal: AbortSignal;
  /** The profile's settings file (--profile, PARTNER_PROFILE, or the default one). */
  configFile: string;
  settings(): Settings;
  client(): PartnerClient;
}

export const POLICY_STATUSES: PolicyStatus[] = ['active', 'cancelled', 'expired', 'pending'];
export const DOCUMENT_TYPES: DocumentType[] = ['application', 'loss_run', 'schedule_of_values', 'financials', 'other'];

export function intOption(values: Values, name: 'limit' | 'wait' | 'timeout', fallback?: number): number | undefined {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number`);
  return Number(raw);
}

/** A mutation: wait for the outcome (default 60 s) with a spinner, or with --wait 0 just start it. */
export async function mutation<T extends object>(
  ctx: Context,
  what: string,
  complete: (opts: MutationOptions) => Promise<T>,
  start?: (opts: Omit<MutationOptions, 'timeoutMs' | 'onPoll'>) => Promise<{ settled: true; result: T } | { settled: false; job: JobHandle }>,
): Promise<number> {
  const waitS = intOption(ctx.values, 'wait', 60)!;
  const key = ctx.values['idempotency-key'];
  const base = { signal: ctx.signal, ...(key ? { idempotencyKey: key } : {}) };
  if (waitS === 0 && start) {
    const outcome = await start({ ...base, wait: 0 });
    ctx.progress.done();
    if (outcome.settled) ctx.out.record(outcome.result);
    else {
      ctx.out.record(outcome.job);
      ctx.out.note(`accepted as ${outcome.job.id}; follow it with: partner jobs wait ${outcome.job.id}`);
    }
    return EXIT.ok;
  }
  // Uploads show their own bar first; everything else waits from the start (Prefer: wait holds the request).
  if (what !== 'attachment') ctx.progress.spin(`${what}: waiting for the outcome`);
  try {
    const result = await complete({
      ...base,
      wait: Math.min(15, waitS),
      timeoutMs: waitS * 1000,
      onAccepted: (job) => ctx.progress.spin(`${what} accepted as ${job.id}, waiting`),
      onPoll: (job) => ctx.progress.spin(`${what} job ${job.id} ${job.status}, next check in ${job.retryAfter} s`),
    });
    ctx.progress.done();
    ctx.out.record(result);
    return EXIT.ok;
  } catch (err) {
    ctx.progress.done();
    if (err instanceof PartnerTimeoutError) {
      ctx.out.record({ id: err.jobId, status: 'processing' });
      ctx.out.note(`the job has not settled after ${waitS} s; follow it with: partner jobs wait ${err.jobId}`);
      return EXIT.retryable;
    }
    throw err;
  }
}

export function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

export function readJsonFile(path: string): unknown {
  return parseJson(path, readText(path));
}

export function parseJson(source: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${source} is not valid JSON: ${(err as Error).message}`);
  }
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  return text;
}

/** One page (with the cursor of the next in the footer), or with --all every page. */
export async function showList<T extends object>(
  ctx: Context,
  list: (cursor: string | undefined) => Promise<Page<T>>,
  iterate: () => AsyncGenerator<T>,
  columns: [string, string][],
): Promise<number> {
  const v = ctx.values;
  if (v.all && v.cursor) throw new UsageError('--all and --cursor do not go together');
  if (v.all) {
    const items: T[] = [];
    for await (const item of iterate()) items.push(item);
    ctx.out.table({ items, nextCursor: null }, items as unknown as Record<string, unknown>[], columns);
  } else {
    const page = await list(v.cursor);
    ctx.out.table(page, page.items as unknown as Record<string, unknown>[], columns, page.nextCursor ? `more: --cursor ${page.nextCursor}` : undefined);
  }
  return EXIT.ok;
}
