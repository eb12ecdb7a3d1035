// The `partner` command: every operation of the Partner Submission API through @partner/sdk, for
// people (tables, progress on a terminal) and for scripts (JSON when piped or with --json, and exit
// codes that say what kind of failure it was). One file per command group in commands/; what they
// share in command.ts; this file parses the command line, dispatches, and reports errors.
import { parseArgs } from 'node:util';
import { PartnerApiError, PartnerAuthError, PartnerClient, PartnerError, PartnerTimeoutError, SDK_VERSION } from '@partner/sdk';
import { ConfigError, configFile, profileOf, readStored, resolveSettings, type Settings } from './config.js';
import { commandHelp, completionScript, groupHelp } from './help.js';
import { Output, Progress, type Io } from './output.js';
import { DOCUMENT_TYPES, EXIT, GLOBAL, OPTIONS, POLICY_STATUSES, UsageError, type Command, type Context, type Values } from './command.js';
import { ACCOUNT_COMMANDS } from './commands/account.js';
import { POLICY_COMMANDS } from './commands/policies.js';
import { SUBMISSION_COMMANDS } from './commands/submissions.js';
import { WITHDRAW_COMMANDS, WITHDRAWAL_REASONS } from './commands/withdraw.js';
import { ATTACHMENT_COMMANDS } from './commands/attachments.js';
import { JOB_COMMANDS } from './commands/jobs.js';
import { EVENT_COMMANDS } from './commands/events.js';
import { API_COMMANDS } from './commands/api.js';
import { WEBHOOK_COMMANDS } from './commands/webhooks.js';
import { LISTEN_COMMANDS } from './commands/listen.js';
import { PRODUCT_COMMANDS } from './commands/products.js';
import { RECEIPT_COMMANDS } from './commands/receipts.js';
import { BIND_COMMANDS } from './commands/bind.js';
import { QUOTE_COMMANDS } from './commands/quotes.js';
import { REQUEST_COMMANDS } from './commands/requests.js';
import { CONSOLE_COMMANDS } from './commands/console.js';
import { CLOCK_COMMANDS } from './commands/clocks.js';

export { EXIT, UsageError, type Command, type Context } from './command.js';

export const COMMANDS: Record<string, Command> = {
  ...ACCOUNT_COMMANDS,
  ...POLICY_COMMANDS,
  ...SUBMISSION_COMMANDS,
  ...WITHDRAW_COMMANDS,
  ...PRODUCT_COMMANDS,
  ...ATTACHMENT_COMMANDS,
  ...JOB_COMMANDS,
  ...EVENT_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...LISTEN_COMMANDS,
  ...RECEIPT_COMMANDS,
  ...BIND_COMMANDS,
  ...QUOTE_COMMANDS,
  ...REQUEST_COMMANDS,
  ...CONSOLE_COMMANDS,
  ...CLOCK_COMMANDS,
  ...API_COMMANDS,
  completion: {
    usage: 'completion bash|zsh',
    summary: 'print a shell completion script',
    examples: ['source <(partner completion bash)                 # bash, this shell', 'partner completion zsh > "${fpath[1]}/_partner"    # zsh'],
    args: ['SHELL'],
    options: [],
    run: async (ctx, [shell]) => {
      if (shell !== 'bash' && shell !== 'zsh') throw new UsageError('completion: bash or zsh');
      ctx.io.stdout.write(completionScript(shell, COMMANDS, GLOBAL.filter((o) => o !== 'version'), { status: [...POLICY_STATUSES, 'processing', 'succeeded', 'failed', 'canceled', 'submitted', 'withdrawn', 'bound'], type: DOCUMENT_TYPES, reason: WITHDRAWAL_REASONS, clearance: ['cleared', 'duplicate', 'blocked', 'review'] }));
      return EXIT.ok;
    },
  },
};

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
    io.stderr.write(`partner: ${err.message}\n${err.usageHint ? 'Run partner --help for usage.\n' : ''}`);
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
    if (args.length > command.args.length || args.length < command.args.length - (command.optionalArgs ?? 0)) {
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
