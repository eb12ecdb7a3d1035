// The CLI's help (per command, per group such as `partner policies`, and the overview) and its shell
// completion scripts, all derived from the command table so they cannot drift from what runs.
import type { Command } from './command.js';

/** What each option means, for `partner <command> --help`. */
export const OPTION_HELP: Record<string, string> = {
  json: 'print JSON (the default when stdout is not a terminal)',
  help: 'this help',
  version: 'print the version',
  principal: 'attribute requests to a principal registered for your partner (x-principal-id)',
  profile: 'use the credentials stored under this profile (also PARTNER_PROFILE), e.g. uat or production',
  debug: 'print each HTTP request and answer to stderr (never the secret or the token)',
  'base-url': 'the API address, e.g. https://api.uat.example.com',
  'auth-url': 'the token server address, e.g. https://auth.uat.example.com',
  'client-id': 'your client id',
  'client-secret-stdin': 'read the client secret from standard input instead of asking',
  scope: 'the access scope (default: <API host>/access)',
  status: 'only items with this status',
  'product-id': 'only policies of this product',
  'policy-number': 'only the policy with this number',
  'updated-since': 'only items updated at or after this RFC 3339 time',
  limit: 'items per page (1-100)',
  cursor: 'the page after this cursor (from the previous page)',
  all: 'every page, one after the other',
  file: 'a JSON file with the submission; - reads standard input',
  validate: 'check the body first (POST /v1/submissions/validate); when it would fail, print each problem and create nothing (exit 1)',
  active: 'only active (true) or inactive (false) products',
  wait: 'seconds to wait for the outcome (default 60); 0 returns the job at once',
  'idempotency-key': 'your own Idempotency-Key (default: a new one per command, kept across its retries); with requests list: only the requests sent with this key',
  type: 'the document type',
  'content-type': "the file's media type (default: from its name)",
  output: 'where to save (default: the attachment\'s own name here); - writes to stdout',
  force: 'replace an existing file',
  timeout: 'give up waiting after this many seconds (default 300)',
  types: 'only these event types, comma-separated',
  since: 'start at this RFC 3339 time (the feed keeps 30 days)',
  'from-start': 'start at the oldest retained event (up to 30 days of history) instead of now',
  kind: 'only jobs of this kind, e.g. submission.create',
  'created-since': 'only items created at or after this RFC 3339 time',
  'read-only': 'a console session that shows no mutating control and refuses every change',
  'created-before': 'only items created before this RFC 3339 time',
  'external-ref': 'only submissions with this externalRef',
  'principal-id': 'only submissions made for this principal',
  data: 'the request body: JSON text, @FILE, or - for standard input',
  header: 'an extra request header, "Name: value" (repeatable)',
  include: 'print the status line and the response headers before the body',
  url: 'where the deliveries are POSTed (https; http too in UAT)',
  description: 'a note for yourself',
  enable: 'enable the endpoint',
  disable: 'disable the endpoint (its pending deliveries fail)',
  event: 'only the delivery of this event',
  'forward-to': 'the local URL to POST each event to, e.g. http://localhost:3000/hooks',
  secret: 'the whsec_… signing secret (default: a new one made on this machine and printed once)',
  reason: 'why: duplicate, applicant_withdrew, entered_in_error or other',
  note: 'a note of up to 500 characters',
  clearance: 'only submissions with this clearance: cleared, duplicate, blocked or review',
  submission: "the submission (receipts list: only this submission's receipts; quotes: the submission quoted)",
  'after-seq': 'only receipts after this seq (the last one you stored)',
  jwks: 'a copy of /.well-known/receipt-keys.json (partner receipts keys > jwks.json)',
  'from-seq': 'the seq of the first receipt in the file, when it is not 1 (with --prev); default: the chain must start at seq 1',
  prev: 'the hash the receipt of --from-seq N links to: the lastHash printed by the check that ended at N-1 (hex SHA-256 of receipt N-1)',
  offer: 'the offer JWS accepted, as read before (default: the quote\'s current offer, read with GET /v1/quotes/{id}); the CLI sends its SHA-256',
  download: 'a folder to save each document in (created if missing), its sha256 checked against the listing',
  option: "a limit and a retention, LIMIT/RETENTION (e.g. 1000000/10000), keys of the product's rating plan; repeat for up to 5 options",
  'request-id': 'only the request(s) sent with this X-Request-Id',
  time: "a test clock's time, RFC 3339 with a zone (e.g. 2027-01-01T00:00:00Z)",
  name: 'a name for the test clock',
  clock: 'UAT only: create the submission on this test clock (sets testClockId)',
};

/** The placeholder an option's value is shown with. */
const ARG_NAMES: Record<string, string> = {
  file: 'FILE', active: 'true|false', output: 'FILE', wait: 'SECONDS', timeout: 'SECONDS', limit: 'N', cursor: 'CURSOR', status: 'STATUS',
  'product-id': 'ID', 'policy-number': 'NUMBER', 'updated-since': 'TIME', 'created-since': 'TIME', 'created-before': 'TIME',
  since: 'TIME', types: 'T1,T2', type: 'TYPE', kind: 'KIND', 'content-type': 'MEDIA_TYPE', 'external-ref': 'REF',
  'principal-id': 'ID', principal: 'ID', profile: 'NAME', data: 'JSON|@FILE|-', header: '"NAME: VALUE"', 'base-url': 'URL',
  'auth-url': 'URL', 'client-id': 'ID', scope: 'SCOPE', 'idempotency-key': 'KEY', url: 'URL', description: 'TEXT', event: 'EVENT_ID',
  'forward-to': 'URL', secret: 'whsec_…', reason: 'REASON', note: 'TEXT', clearance: 'STATUS', submission: 'SUBMISSION_ID', 'after-seq': 'SEQ', jwks: 'FILE', 'from-seq': 'N', prev: 'HASH', option: 'LIMIT/RETENTION',
  offer: 'JWS', download: 'DIR', time: 'TIME', name: 'TEXT', clock: 'CLOCK_ID',
  'request-id': 'ID',
};


const GLOBAL_LINE = 'Global options: --json, --profile NAME, --principal ID, --debug, -h/--help';

function optionLine(name: string, short: string | undefined, type: string): string {
  const flag = `${short ? `-${short}, ` : ''}--${name}${type === 'string' ? ` ${ARG_NAMES[name] ?? 'VALUE'}` : ''}`;
  return `  ${flag.padEnd(28)} ${OPTION_HELP[name] ?? ''}`;
}

export function commandHelp(name: string, command: Command, options: Record<string, { type: string; short?: string }>): string {
  const lines = [`Usage: partner ${command.usage}`, '', command.summary];
  if (command.options.length > 0) {
    lines.push('', 'Options:');
    for (const o of command.options) lines.push(optionLine(o, options[o]?.short, options[o]?.type ?? 'boolean'));
  }
  lines.push('', GLOBAL_LINE, '', 'Examples:', ...command.examples.map((e) => `  ${e}`));
  return `${lines.join('\n')}\n`;
}

/** The commands of a group (`partner policies`): their names and summaries. */
export function groupHelp(group: string, commands: Record<string, Command>): string | undefined {
  const members = Object.entries(commands).filter(([n]) => n.startsWith(`${group} `));
  if (members.length === 0) return undefined;
  const width = Math.max(...members.map(([n]) => n.length - group.length - 1));
  return [
    `Usage: partner ${group} <command> [options]`,
    '',
    'Commands:',
    ...members.map(([n, c]) => `  ${n.slice(group.length + 1).padEnd(width)}  ${c.summary}`),
    '',
    `Run partner ${group} <command> --help for its options and examples.`,
    '',
  ].join('\n');
}

/**
 * A bash completion function for the command table: command words, then each command's options, and
 * the values of the options that take one of a fixed set. zsh loads it through bashcompinit.
 */
export function completionScript(shell: 'bash' | 'zsh', commands: Record<string, Command>, globalOptions: string[], values: Record<string, string[]>): string {
  const top = [...new Set(Object.keys(commands).map((n) => n.split(' ')[0]!))].sort();
  const groups = top.filter((t) => Object.keys(commands).some((n) => n.startsWith(`${t} `)));
  const subcases = groups.map((g) => {
    const subs = Object.keys(commands).filter((n) => n.startsWith(`${g} `)).map((n) => n.slice(g.length + 1));
    return `      ${g}) words="${subs.join(' ')}" ;;`;
  });
  const optcases = Object.entries(commands).map(([n, c]) => `      "${n}") opts="${c.options.map((o) => `--${o}`).join(' ')}" ;;`);
  const valuecases = Object.entries(values).map(([o, v]) => `    --${o}) COMPREPLY=($(compgen -W "${v.join(' ')}" -- "$cur")); return ;;`);
  const fn = `_partner() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" words="" opts="" key
  case "$prev" in
${valuecases.join('\n')}
  esac
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${top.join(' ')}" -- "$cur"))
    return
  fi
  key="\${COMP_WORDS[1]}"
  case "$key" in
    ${groups.join('|')}) key="\${COMP_WORDS[1]} \${COMP_WORDS[2]}" ;;
  esac
  if [ "$COMP_CWORD" -eq 2 ] && [[ "$cur" != -* ]]; then
    case "\${COMP_WORDS[1]}" in
${subcases.join('\n')}
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return
  fi
  if [[ "$cur" == -* ]]; then
    case "$key" in
${optcases.join('\n')}
    esac
    COMPREPLY=($(compgen -W "$opts ${globalOptions.map((o) => `--${o}`).join(' ')}" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _partner partner
`;
  if (shell === 'bash') return `# partner completion for bash: source <(partner completion bash), or save it as /etc/bash_completion.d/partner\n${fn}`;
  return `#compdef partner\n# partner completion for zsh: partner completion zsh > "\${fpath[1]}/_partner", then start a new shell\nautoload -U +X bashcompinit && bashcompinit\n${fn}`;
}
