// `partner login`, `logout` and `health`: the credentials of a profile, checked before they are stored.
import { createInterface } from 'node:readline/promises';
import { PartnerApiError, PartnerClient } from '@partner/sdk';
import { defaultScope, profileOf, readStored, removeStored, writeStored, type Settings } from '../config.js';
import type { Io } from '../output.js';
import { EXIT, readAll, UsageError, type Command, type Context } from '../command.js';

export const ACCOUNT_COMMANDS: Record<string, Command> = {
  login: {
    usage: 'login [--base-url URL] [--auth-url URL] [--client-id ID] [--scope SCOPE] [--client-secret-stdin]',
    summary: 'check the credentials (a token, then GET /v1/health with it) and store them (asks for what is not given)',
    examples: [
      'partner login                                   # asks for each setting',
      'partner login --profile uat --base-url https://api.uat.example.com --auth-url https://auth.uat.example.com --client-id cli_… --client-secret-stdin < secret.txt',
    ],
    args: [],
    options: ['base-url', 'auth-url', 'client-id', 'scope', 'client-secret-stdin'],
    run: login,
  },
  logout: {
    usage: 'logout',
    summary: 'forget the stored credentials',
    examples: ['partner logout', 'partner logout --profile uat'],
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
    examples: ['partner health', 'partner health --profile production --json'],
    args: [],
    options: [],
    run: async (ctx) => {
      ctx.out.record(await ctx.client().health({ signal: ctx.signal }));
      return EXIT.ok;
    },
  },
};

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
  // Only what works is stored: a token from the token server, and the gateway answering GET /v1/health
  // with it (a scope the token server grants but this gateway does not serve is 403 insufficient_scope).
  try {
    await new PartnerClient({ ...settings, maxAttempts: 2 }).health({ signal: ctx.signal });
  } catch (err) {
    if (err instanceof PartnerApiError && err.status === 403) {
      ctx.out.note(`nothing stored: ${baseUrl} refused the token for scope ${settings.scope} (${err.code}); check --scope and --base-url, or ask for the health/read permission`);
    }
    throw err;
  }
  writeStored(file, settings);
  ctx.out.record({ configFile: file, baseUrl, authUrl, clientId, scope: settings.scope, ...(values.profile || io.env.PARTNER_PROFILE ? { profile: profileOf(values.profile, io.env) ?? 'default' } : {}) });
  return EXIT.ok;
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
