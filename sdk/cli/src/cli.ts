// The `partner` command: every operation of the Partner Submission API through @partner/sdk, for
// people (tables, progress on a terminal) and for scripts (JSON when piped or with --json, and exit
// codes that say what kind of failure it was).
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, openAsBlob, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import {
  PartnerApiError,
  PartnerAuthError,
  PartnerClient,
  PartnerError,
  PartnerTimeoutError,
  SDK_VERSION,
  type DocumentType,
  type EventType,
  type JobHandle,
  type MutationOptions,
  type PolicyListParams,
  type PolicyStatus,
} from '@partner/sdk';
import { ConfigError, configFile, defaultScope, profileOf, readStored, removeStored, resolveSettings, writeStored, type Settings } from './config.js';
import { commandHelp, completionScript, groupHelp } from './help.js';
import { formatBytes, Output, Progress, type Io } from './output.js';
import { LIST_COMMANDS } from './list-commands.js';

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

export class UsageError extends Error {}

const OPTIONS = {
  json: { type: 'boolean' },
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
} as const;

type OptionName = keyof typeof OPTIONS;
type Values = {
  [K in OptionName]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[] : (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string;
};

const GLOBAL: OptionName[] = ['json', 'help', 'version', 'principal', 'profile', 'debug'];

export interface Command {
  usage: string;
  summary: string;
  args: string[];
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

const POLICY_STATUSES: PolicyStatus[] = ['active', 'cancelled', 'expired', 'pending'];
const DOCUMENT_TYPES: DocumentType[] = ['application', 'loss_run', 'schedule_of_values', 'financials', 'other'];

export function intOption(values: Values, name: 'limit' | 'wait' | 'timeout', fallback?: number): number | undefined {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number`);
  return Number(raw);
}

export const COMMANDS: Record<string, Command> = {
  login: {
    usage: 'login [--base-url URL] [--auth-url URL] [--client-id ID] [--scope SCOPE] [--client-secret-stdin]',
    summary: 'check and store the credentials (asks for what is not given)',
    args: [],
    options: ['base-url', 'auth-url', 'client-id', 'scope', 'client-secret-stdin'],
    run: login,
  },
  logout: {
    usage: 'logout',
    summary: 'forget the stored credentials',
    args: [],
    options: [],
    run: async (ctx) => {
      const file = ctx.configFile;
      ctx.out.record({ configFile: file, removed: removeStored(file) });
      return EXIT.ok;
    },
  },
  health: {
    usage: 'health',
    summary: 'who the credentials belong to',
    args: [],
    options: [],
    run: async (ctx) => {
      ctx.out.record(await ctx.client().health({ signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'policies list': {
    usage: 'policies list [--status S] [--product-id ID] [--policy-number N] [--updated-since TS] [--limit N] [--cursor C] [--all]',
    summary: 'list policies, newest first (one page, or --all)',
    args: [],
    options: ['status', 'product-id', 'policy-number', 'updated-since', 'limit', 'cursor', 'all'],
    run: async (ctx) => {
      const v = ctx.values;
      if (v.status !== undefined && !POLICY_STATUSES.includes(v.status as PolicyStatus)) {
        throw new UsageError(`--status must be one of ${POLICY_STATUSES.join(', ')}`);
      }
      if (v.all && v.cursor) throw new UsageError('--all and --cursor do not go together');
      const params: PolicyListParams = {
        ...(v.status ? { status: v.status as PolicyStatus } : {}),
        ...(v['product-id'] ? { productId: v['product-id'] } : {}),
        ...(v['policy-number'] ? { policyNumber: v['policy-number'] } : {}),
        ...(v['updated-since'] ? { updatedSince: v['updated-since'] } : {}),
        ...(v.limit !== undefined ? { limit: intOption(v, 'limit') } : {}),
      };
      const columns: [string, string][] = [
        ['policyNumber', 'number'],
        ['status', 'status'],
        ['insured.legalName', 'insured'],
        ['effectiveDate', 'effective'],
        ['expirationDate', 'expires'],
        ['premium.amount', 'premium'],
        ['premium.currency', ''],
        ['policyId', 'id'],
      ];
      const client = ctx.client();
      if (v.all) {
        const items = [];
        for await (const p of client.iteratePolicies(params, { signal: ctx.signal })) items.push(p);
        ctx.out.table({ items, nextCursor: null }, items as unknown as Record<string, unknown>[], columns);
      } else {
        const page = await client.listPolicies({ ...params, ...(v.cursor ? { cursor: v.cursor } : {}) }, { signal: ctx.signal });
        ctx.out.table(page, page.items as unknown as Record<string, unknown>[], columns, page.nextCursor ? `more: --cursor ${page.nextCursor}` : undefined);
      }
      return EXIT.ok;
    },
  },
  'policies get': {
    usage: 'policies get POLICY_ID',
    summary: 'one policy',
    args: ['POLICY_ID'],
    options: [],
    run: async (ctx, [id]) => {
      ctx.out.record(await ctx.client().getPolicy(id!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'submissions create': {
    usage: 'submissions create --file app.json|- [--wait SECONDS] [--idempotency-key KEY]',
    summary: 'create a submission and wait for it (default 60 s; --wait 0 returns the job at once)',
    args: [],
    options: ['file', 'wait', 'idempotency-key'],
    run: async (ctx) => {
      if (!ctx.values.file) throw new UsageError('--file is required: a JSON file with the submission (- reads standard input)');
      const input = (ctx.values.file === '-' ? parseJson('standard input', await readAll(ctx.io.stdin)) : readJsonFile(ctx.values.file)) as Parameters<
        PartnerClient['createSubmission']
      >[0];
      const client = ctx.client();
      return mutation(ctx, 'submission', (opts) => client.createSubmission(input, opts), (opts) => client.startSubmission(input, opts));
    },
  },
  'submissions get': {
    usage: 'submissions get SUBMISSION_ID',
    summary: 'one submission',
    args: ['SUBMISSION_ID'],
    options: [],
    run: async (ctx, [id]) => {
      ctx.out.record(await ctx.client().getSubmission(id!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'attachments upload': {
    usage: 'attachments upload SUBMISSION_ID FILE [--type DOCUMENT_TYPE] [--content-type MEDIA_TYPE] [--wait SECONDS] [--idempotency-key KEY]',
    summary: `attach a file (document types: ${DOCUMENT_TYPES.join(', ')})`,
    args: ['SUBMISSION_ID', 'FILE'],
    options: ['type', 'content-type', 'wait', 'idempotency-key'],
    run: async (ctx, [submissionId, path]) => {
      const type = ctx.values.type;
      if (type !== undefined && !DOCUMENT_TYPES.includes(type as DocumentType)) {
        throw new UsageError(`--type must be one of ${DOCUMENT_TYPES.join(', ')}`);
      }
      let stat;
      try {
        stat = statSync(path!);
      } catch {
        throw new UsageError(`cannot read ${path}`);
      }
      if (!stat.isFile()) throw new UsageError(`${path} is not a file`);
      const file = await openAsBlob(path!);
      const fileName = basename(path!);
      const client = ctx.client();
      const upload = {
        fileName,
        ...(type ? { documentType: type as DocumentType } : {}),
        ...(ctx.values['content-type'] ? { contentType: ctx.values['content-type'] } : {}),
        onProgress: (p: { sentBytes: number; totalBytes: number }) => {
          if (p.sentBytes < p.totalBytes) ctx.progress.bytes(`uploading ${fileName}`, p.sentBytes, p.totalBytes);
          else ctx.progress.spin(`${fileName} uploaded, waiting for the attachment job`);
        },
      };
      return mutation(
        ctx,
        'attachment',
        (opts) => client.uploadAttachment(submissionId!, file, { ...upload, ...opts }),
        (opts) => client.startAttachmentUpload(submissionId!, file, { ...upload, ...opts }),
      );
    },
  },
  'attachments list': {
    usage: 'attachments list SUBMISSION_ID [--limit N] [--cursor C] [--all]',
    summary: "a submission's attachments, newest first",
    args: ['SUBMISSION_ID'],
    options: ['limit', 'cursor', 'all'],
    run: async (ctx, [submissionId]) => {
      const v = ctx.values;
      if (v.all && v.cursor) throw new UsageError('--all and --cursor do not go together');
      const limit = intOption(v, 'limit');
      const columns: [string, string][] = [
        ['fileName', 'file'],
        ['documentType', 'type'],
        ['contentType', 'media type'],
        ['size', 'size'],
        ['createdAt', 'created'],
        ['attachmentId', 'id'],
      ];
      const rows = (items: { sizeBytes: number }[]) => items.map((a) => ({ ...a, size: formatBytes(a.sizeBytes) }));
      const client = ctx.client();
      if (v.all) {
        const items = [];
        for await (const a of client.iterateAttachments(submissionId!, limit ? { limit } : {}, { signal: ctx.signal })) items.push(a);
        ctx.out.table({ items, nextCursor: null }, rows(items), columns);
      } else {
        const page = await client.listAttachments(submissionId!, { ...(limit ? { limit } : {}), ...(v.cursor ? { cursor: v.cursor } : {}) }, { signal: ctx.signal });
        ctx.out.table(page, rows(page.items), columns, page.nextCursor ? `more: --cursor ${page.nextCursor}` : undefined);
      }
      return EXIT.ok;
    },
  },
  'attachments get': {
    usage: 'attachments get SUBMISSION_ID ATTACHMENT_ID',
    summary: 'one attachment record',
    args: ['SUBMISSION_ID', 'ATTACHMENT_ID'],
    options: [],
    run: async (ctx, [submissionId, attachmentId]) => {
      ctx.out.record(await ctx.client().getAttachment(submissionId!, attachmentId!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'attachments download': {
    usage: 'attachments download SUBMISSION_ID ATTACHMENT_ID [-o FILE|-] [--force]',
    summary: "save an attachment's bytes (default: under its own name here; -o - writes to stdout)",
    args: ['SUBMISSION_ID', 'ATTACHMENT_ID'],
    options: ['output', 'force'],
    run: download,
  },
  'attachments delete': {
    usage: 'attachments delete SUBMISSION_ID ATTACHMENT_ID [--wait SECONDS] [--idempotency-key KEY]',
    summary: 'delete an attachment (a job)',
    args: ['SUBMISSION_ID', 'ATTACHMENT_ID'],
    options: ['wait', 'idempotency-key'],
    run: async (ctx, [submissionId, attachmentId]) => {
      const client = ctx.client();
      return mutation(ctx, 'deletion', (opts) => client.deleteAttachment(submissionId!, attachmentId!, opts));
    },
  },
  ...LIST_COMMANDS,
  'jobs get': {
    usage: 'jobs get JOB_ID',
    summary: 'a job: settled, or processing',
    args: ['JOB_ID'],
    options: [],
    run: async (ctx, [id]) => {
      ctx.out.record(await ctx.client().getJob(id!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'jobs wait': {
    usage: 'jobs wait JOB_ID [--timeout SECONDS]',
    summary: 'wait for a job to settle (default at most 300 s), answered the moment it settles (Prefer: wait)',
    args: ['JOB_ID'],
    options: ['timeout'],
    run: async (ctx, [id]) => {
      const timeoutS = intOption(ctx.values, 'timeout', 300)!;
      ctx.progress.spin(`waiting for ${id}`);
      try {
        const job = await ctx.client().waitForJob(id!, {
          signal: ctx.signal,
          timeoutMs: timeoutS * 1000,
          // Each poll holds the request (Prefer: wait), so the answer comes at settlement, not at the next poll.
          pollWaitSeconds: 15,
          onPoll: (j) => ctx.progress.spin(`waiting for ${id}: ${j.status}, next check in ${j.retryAfter} s`),
        });
        ctx.progress.done();
        ctx.out.record(job);
        if (job.status === 'failed') return job.error.retryable ? EXIT.retryable : EXIT.apiError;
        return EXIT.ok;
      } finally {
        ctx.progress.done();
      }
    },
  },
  'events tail': {
    usage: 'events tail [--types T1,T2] [--since TIME | --cursor CURSOR] [--json]',
    summary: 'print events as they happen (one JSON object a line with --json), until Ctrl-C',
    args: [],
    options: ['types', 'since', 'cursor'],
    run: (ctx) => tailEvents(ctx),
  },
  api: {
    usage: 'api METHOD PATH [--data JSON|@FILE|-] [-H "Name: value"]... [-i]',
    summary: 'any API request, authenticated, printing the answer as it is (exit code from its status)',
    args: ['METHOD', 'PATH'],
    options: ['data', 'header', 'include'],
    run: (ctx, [method, path]) => apiRequest(ctx, method!, path!),
  },
  completion: {
    usage: 'completion bash|zsh',
    summary: 'print a shell completion script',
    args: ['SHELL'],
    options: [],
    run: async (ctx, [shell]) => {
      if (shell !== 'bash' && shell !== 'zsh') throw new UsageError('completion: bash or zsh');
      ctx.io.stdout.write(completionScript(shell, COMMANDS, GLOBAL.filter((o) => o !== 'version'), { status: [...POLICY_STATUSES, 'processing', 'succeeded', 'failed', 'submitted'], type: DOCUMENT_TYPES }));
      return EXIT.ok;
    },
  },
};

const API_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * `partner api`: the escape hatch (like `gh api`). One request with the profile's token, no retries
 * and no Idempotency-Key unless given (-H), the answer printed as it is; exit 0 for a 2xx, else the
 * exit code of the error it is (4 for 401/403, 3 when retrying may help, 1 otherwise).
 */
async function apiRequest(ctx: Context, rawMethod: string, path: string): Promise<number> {
  const method = rawMethod.toUpperCase();
  if (!API_METHODS.includes(method)) throw new UsageError(`METHOD is one of ${API_METHODS.join(', ')}`);
  if (!/^\/v1(\/|\?|$)/.test(path)) throw new UsageError('PATH starts with /v1, e.g. /v1/policies?limit=5');
  const headers = new Headers({ accept: 'application/json', 'user-agent': `partner-cli/${SDK_VERSION}` });
  for (const h of ctx.values.header ?? []) {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new UsageError(`-H ${JSON.stringify(h)}: write it as "Name: value"`);
    try {
      headers.set(h.slice(0, colon).trim(), h.slice(colon + 1).trim());
    } catch {
      throw new UsageError(`-H ${JSON.stringify(h)} is not a valid header`);
    }
  }
  if (ctx.values.principal !== undefined && !headers.has('x-principal-id')) headers.set('x-principal-id', ctx.values.principal);
  let body: string | undefined;
  const data = ctx.values.data;
  if (data !== undefined) {
    body = data === '-' ? await readAll(ctx.io.stdin) : data.startsWith('@') ? readText(data.slice(1)) : data;
    parseJson(data === '-' ? 'standard input' : data.startsWith('@') ? data.slice(1) : '--data', body);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  const base = ctx.settings().baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  headers.set('authorization', `Bearer ${await ctx.client().accessToken({ signal: ctx.signal })}`);
  const url = `${base}${path}`;
  if (ctx.values.debug) ctx.io.stderr.write(`→ ${method} ${url}\n`);
  const started = Date.now();
  const res = await fetch(url, { method, headers, body, signal: ctx.signal, redirect: 'manual' });
  const text = await res.text();
  const requestId = res.headers.get('x-request-id');
  if (ctx.values.debug) ctx.io.stderr.write(`← ${res.status} in ${Date.now() - started} ms${requestId ? `, request id ${requestId}` : ''}\n`);
  let parsed: unknown;
  try {
    parsed = text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    parsed = undefined;
  }
  if (ctx.values.include) {
    ctx.io.stdout.write(`HTTP ${res.status} ${res.statusText}\n`);
    res.headers.forEach((v, k) => ctx.io.stdout.write(`${k}: ${v}\n`));
    ctx.io.stdout.write('\n');
  }
  if (parsed !== undefined) ctx.out.writeJson(parsed);
  else if (text) ctx.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  if (res.ok) return EXIT.ok;
  const error = (parsed as { error?: { code?: string; retryable?: boolean } } | undefined)?.error;
  ctx.io.stderr.write(`partner: HTTP ${res.status}${error?.code ? ` ${error.code}` : ''}${requestId ? ` (request id ${requestId})` : ''}\n`);
  if (res.status === 401 || res.status === 403) return EXIT.auth;
  return error?.retryable || res.status === 429 || res.status >= 500 ? EXIT.retryable : EXIT.apiError;
}

/** `events tail`: follows the feed with long-poll; on Ctrl-C says how to resume where it stopped. */
async function tailEvents(ctx: Context): Promise<number> {
  const v = ctx.values;
  if (v.since && v.cursor) throw new UsageError('give --since or --cursor, not both');
  const types = v.types ? (v.types.split(',').map((t) => t.trim()) as EventType[]) : undefined;
  let cursor = v.cursor;
  const params = { ...(types ? { types } : {}), ...(v.since ? { since: v.since } : {}), ...(cursor ? { cursor } : {}) };
  for await (const e of ctx.client().followEvents(params, { signal: ctx.signal, onCursor: (c) => (cursor = c) })) {
    if (ctx.out.json) ctx.io.stdout.write(`${JSON.stringify(e)}\n`);
    else {
      const d = e.data as Record<string, unknown>;
      const about = d.submissionId ?? d.attachmentId ?? d.id ?? '';
      const extra = e.type === 'job.failed' ? ` ${(d.error as { code?: string } | undefined)?.code ?? ''}` : d.kind ? ` ${String(d.kind)}` : '';
      ctx.io.stdout.write(`${e.timestamp}  ${e.type.padEnd(18)}  ${String(about)}${extra}  ${e.id}\n`);
    }
  }
  if (cursor) ctx.out.note(`stopped; resume with: partner events tail --cursor ${cursor}${v.types ? ` --types ${v.types}` : ''}`);
  return EXIT.ok;
}

/** A mutation: wait for the outcome (default 60 s) with a spinner, or with --wait 0 just start it. */
async function mutation<T extends object>(
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

async function download(ctx: Context, [submissionId, attachmentId]: string[]): Promise<number> {
  const client = ctx.client();
  const target = ctx.values.output;
  const dl = await client.downloadAttachment(submissionId!, attachmentId!, { signal: ctx.signal });
  const hash = createHash('sha256');
  let received = 0;
  const counted = dl.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        hash.update(chunk);
        received += chunk.byteLength;
        ctx.progress.bytes('downloading', received, dl.contentLength ?? received);
        controller.enqueue(chunk);
      },
    }),
  );
  const check = () => {
    const sha256 = hash.digest('hex');
    if (dl.sha256 && sha256 !== dl.sha256) throw new PartnerError(`the download is corrupt (sha256 ${sha256}, expected ${dl.sha256}); try again`, true);
    return sha256;
  };
  if (target === '-') {
    await counted.pipeTo(Writable.toWeb(ctx.io.stdout as Writable), { signal: ctx.signal });
    ctx.progress.done();
    check();
    return EXIT.ok;
  }
  const file = resolve(target ?? safeName(dl.fileName ?? attachmentId!));
  if (existsSync(file) && !ctx.values.force) {
    await dl.body.cancel().catch(() => undefined);
    throw new UsageError(`${file} exists; use --force to replace it, or -o another name`);
  }
  const partial = `${file}.partial`;
  try {
    await counted.pipeTo(Writable.toWeb(createWriteStream(partial, { mode: 0o600 })), { signal: ctx.signal });
    const sha256 = check();
    renameSync(partial, file);
    ctx.progress.done();
    ctx.out.record({ file, bytes: received, sha256, contentType: dl.contentType });
    return EXIT.ok;
  } catch (err) {
    ctx.progress.done();
    rmSync(partial, { force: true });
    throw err;
  }
}

/** A file name from the server, made safe to create in the current directory. */
function safeName(name: string): string {
  const base = [...basename(name.replace(/\\/g, '/'))].map((c) => (c.charCodeAt(0) < 0x20 ? '_' : c)).join('');
  return base === '' || base === '.' || base === '..' ? 'attachment' : base;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

function readJsonFile(path: string): unknown {
  return parseJson(path, readText(path));
}

function parseJson(source: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${source} is not valid JSON: ${(err as Error).message}`);
  }
}

async function login(ctx: Context): Promise<number> {
  const { io, values } = ctx;
  const file = ctx.configFile;
  const stored = readStored(file, (m) => ctx.out.note(`warning: ${m}`));
  const interactive = io.stdin.isTTY === true && !values['client-secret-stdin'];
  const ask = async (label: string, current: string | undefined): Promise<string> => {
    if (!interactive) return current ?? '';
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
    try {
      const answer = (await rl.question(`${label}${current ? ` [${current}]` : ''}: `, { signal: ctx.signal })).trim();
      return answer || current || '';
    } finally {
      rl.close();
    }
  };
  const baseUrl = (values['base-url'] ?? io.env.PARTNER_BASE_URL) || (await ask('API base URL', stored.baseUrl));
  const authUrl = (values['auth-url'] ?? io.env.PARTNER_AUTH_URL) || (await ask('Token server URL', stored.authUrl));
  const clientId = (values['client-id'] ?? io.env.PARTNER_CLIENT_ID) || (await ask('Client id', stored.clientId));
  let clientSecret: string | undefined;
  if (values['client-secret-stdin']) clientSecret = (await readAll(io.stdin)).trim();
  else clientSecret = io.env.PARTNER_CLIENT_SECRET || (interactive ? await readHidden(io, 'Client secret: ') : undefined);
  // Logging in again as the same client may keep the stored secret.
  if (!clientSecret && clientId === stored.clientId) clientSecret = stored.clientSecret;
  // The scope follows from the base URL unless given (or stored for the same base URL).
  const scope = values.scope || io.env.PARTNER_SCOPE || (stored.baseUrl === baseUrl ? stored.scope : undefined) || defaultScope(baseUrl);
  const settings: Settings = { baseUrl, authUrl, clientId, clientSecret: clientSecret ?? '', scope };
  for (const [key, value] of Object.entries(settings)) {
    if (!value) throw new UsageError(`login needs ${key === 'clientSecret' ? 'the client secret (--client-secret-stdin, PARTNER_CLIENT_SECRET or a terminal)' : `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`}`);
  }
  for (const key of ['baseUrl', 'authUrl'] as const) {
    try {
      const u = new URL(settings[key]);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('not http(s)');
    } catch {
      throw new UsageError(`${settings[key]} is not an http(s) URL`);
    }
  }
  // Only credentials the token server accepts are stored.
  await new PartnerClient({ ...settings, maxAttempts: 2 }).accessToken({ signal: ctx.signal });
  writeStored(file, settings);
  ctx.out.record({ configFile: file, baseUrl, authUrl, clientId, scope: settings.scope, ...(values.profile || io.env.PARTNER_PROFILE ? { profile: profileOf(values.profile, io.env) ?? 'default' } : {}) });
  return EXIT.ok;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  return text;
}

/** Reads a line from the terminal without echoing it. */
function readHidden(io: Io, question: string): Promise<string> {
  const stdin = io.stdin;
  io.stderr.write(question);
  stdin.setRawMode?.(true);
  stdin.resume();
  return new Promise((resolvePromise, reject) => {
    let value = '';
    const done = () => {
      stdin.setRawMode?.(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      io.stderr.write('\n');
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') {
          done();
          return resolvePromise(value);
        }
        if (ch === '\u0003') {
          done();
          return reject(new UsageError('cancelled'));
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  partner ${c.usage}\n      ${c.summary}`);
  // (partner <command> --help: its options and examples; partner <group>: the group's commands.)
  return `Usage: partner <command> [options]

Commands:
${lines.join('\n')}

Options for every command:
  --json            print JSON (the default when stdout is not a terminal)
  --profile NAME    use the credentials stored under NAME (also PARTNER_PROFILE), e.g. uat, production
  --principal ID    attribute requests to a principal registered for your partner (x-principal-id)
  --debug           print each HTTP request and answer to stderr (never the secret or the token)
  -h, --help        this help, or a command's: partner submissions create --help;  --version  the version

Credentials: partner login stores them in $XDG_CONFIG_HOME/partner/config.json (~/.config/partner),
or profiles/NAME.json beside it for --profile NAME, readable by you only. PARTNER_BASE_URL,
PARTNER_AUTH_URL, PARTNER_CLIENT_ID, PARTNER_CLIENT_SECRET and PARTNER_SCOPE override it.
Shell completion: partner completion bash|zsh.

Exit codes: 0 ok; 1 API error (retrying will not help); 2 usage; 3 retryable failure or timeout
(try again later); 4 not logged in, credentials or scope refused, or permission missing.
`;
}

/** --debug: each HTTP attempt and answer on stderr. The SDK never passes the Authorization header. */
function debugHooks(io: Io): Pick<ConstructorParameters<typeof PartnerClient>[0], 'onRequest' | 'onResponse'> {
  const shown = ['idempotency-key', 'prefer', 'x-principal-id', 'content-type', 'content-length'];
  return {
    onRequest: (r) => {
      const headers = shown.filter((h) => r.headers[h] !== undefined).map((h) => `${h}: ${r.headers[h]}`);
      io.stderr.write(`→ ${r.method} ${r.url}${r.attempt > 1 ? ` (attempt ${r.attempt})` : ''}${headers.length ? `  [${headers.join('; ')}]` : ''}\n`);
    },
    onResponse: (r) => io.stderr.write(`← ${r.status} ${r.method} ${r.url} in ${r.durationMs} ms${r.requestId ? `, request id ${r.requestId}` : ''}\n`),
  };
}

function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof ConfigError) return EXIT.auth;
  if (err instanceof PartnerAuthError) return err.retryable ? EXIT.retryable : EXIT.auth;
  if (err instanceof PartnerApiError && (err.status === 401 || err.status === 403)) return EXIT.auth;
  if (err instanceof PartnerError) return err.retryable ? EXIT.retryable : EXIT.apiError;
  return EXIT.apiError;
}

function report(err: unknown, out: Output, io: Io): void {
  if (err instanceof UsageError) {
    io.stderr.write(`partner: ${err.message}\nRun partner --help for usage.\n`);
    return;
  }
  if (err instanceof PartnerApiError) {
    const where = [err.status ? `HTTP ${err.status}` : undefined, err.jobId ? `job ${err.jobId}` : undefined, err.requestId ? `request id ${err.requestId}` : undefined]
      .filter(Boolean)
      .join(', ');
    io.stderr.write(`partner: ${err.code}: ${err.message}${where ? ` (${where})` : ''}\n`);
    for (const d of err.details ?? []) io.stderr.write(`  ${d.field}: ${d.issue}\n`);
    if (err.retryable) io.stderr.write('  this may pass: try again later\n');
    if (out.json) out.writeJson(err.toJSON());
    return;
  }
  io.stderr.write(`partner: ${err instanceof Error ? err.message : String(err)}\n`);
}

/** Runs the CLI with argv (without node and the script); resolves with the exit code. */
export async function run(argv: string[], io: Io, signal: AbortSignal): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true }) as { values: Values; positionals: string[] });
  } catch (err) {
    io.stderr.write(`partner: ${(err as Error).message}\nRun partner --help for usage.\n`);
    return EXIT.usage;
  }
  if (values.version) {
    io.stdout.write(`partner ${SDK_VERSION}\n`);
    return EXIT.ok;
  }
  // `partner help X Y` is `partner X Y --help`.
  if (positionals[0] === 'help' && positionals.length > 1) {
    positionals = positionals.slice(1);
    values.help = true;
  }
  const name = COMMANDS[positionals.slice(0, 2).join(' ')] ? positionals.slice(0, 2).join(' ') : positionals[0];
  const command = name === undefined ? undefined : COMMANDS[name];
  if (command && values.help) {
    io.stdout.write(commandHelp(name!, command, OPTIONS));
    return EXIT.ok;
  }
  // A group alone (`partner policies`) lists its commands.
  const group = !command && positionals.length === 1 ? groupHelp(positionals[0]!, COMMANDS) : undefined;
  if (group) {
    io.stdout.write(group);
    return EXIT.ok;
  }
  if (values.help || positionals.length === 0 || positionals[0] === 'help') {
    (positionals.length === 0 && !values.help ? io.stderr : io.stdout).write(usage());
    return positionals.length === 0 && !values.help ? EXIT.usage : EXIT.ok;
  }
  const out = new Output(io, values.json === true || io.stdout.isTTY !== true);
  try {
    if (!command) throw new UsageError(`unknown command: ${positionals.slice(0, 2).join(' ')}`);
    const args = positionals.slice(name!.split(' ').length);
    if (args.length !== command.args.length) {
      throw new UsageError(`usage: partner ${command.usage}`);
    }
    const allowed = new Set<string>([...GLOBAL, ...command.options]);
    const unexpected = Object.keys(values).filter((k) => !allowed.has(k));
    if (unexpected.length > 0) throw new UsageError(`${unexpected.map((k) => `--${k}`).join(', ')} not accepted by ${name}; usage: partner ${command.usage}`);

    const profile = profileOf(values.profile, io.env);
    const file = configFile(io.env, profile);
    let settings: Settings | undefined;
    let client: PartnerClient | undefined;
    const ctx: Context = {
      io,
      values,
      out,
      progress: new Progress(io.stderr),
      signal,
      configFile: file,
      settings: () => (settings ??= resolveSettings(io.env, readStored(file, (m) => out.note(`warning: ${m}`)), profile)),
      client: () => {
        client ??= new PartnerClient({
          ...ctx.settings(),
          ...(values.principal !== undefined ? { principalId: values.principal } : {}),
          userAgent: `partner-cli/${SDK_VERSION}`,
          ...(values.debug ? debugHooks(io) : {}),
        });
        return client;
      },
    };
    return await command.run(ctx, args);
  } catch (err) {
    // A wait cut short (Ctrl-C, or --timeout ran out) leaves a job running: say how to follow it.
    const jobId = err instanceof PartnerError && 'jobId' in err && typeof err.jobId === 'string' && err.jobId ? err.jobId : undefined;
    if (signal.aborted) {
      io.stderr.write(jobId ? `partner: interrupted; job ${jobId} goes on. Follow it with: partner jobs wait ${jobId}\n` : 'partner: interrupted\n');
      return EXIT.interrupted;
    }
    if (err instanceof PartnerTimeoutError && jobId) {
      out.record({ id: jobId, status: 'processing' });
      out.note(`the job has not settled yet; follow it with: partner jobs wait ${jobId}`);
      return EXIT.retryable;
    }
    report(err, out, io);
    return exitCodeOf(err);
  }
}
