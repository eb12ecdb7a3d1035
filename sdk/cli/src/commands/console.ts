// `partner console [--read-only]`: mints a single-use link to the partner console (POST
// /v1/console/sessions) and prints it; on a terminal with a desktop browser it also opens it. The
// link works once, within 10 minutes; the client credentials never leave this machine.
import { spawn } from 'node:child_process';
import { EXIT, type Command, type Context } from '../command.js';
import type { Io } from '../output.js';

/** The command that opens a URL in the desktop's browser, when there is one (never on a headless machine). */
export function browserOpener(io: Pick<Io, 'stdout' | 'env'>, platform: NodeJS.Platform = process.platform): [string, string[]] | undefined {
  if (io.stdout.isTTY !== true || io.env.PARTNER_NO_BROWSER) return undefined;
  if (platform === 'darwin') return ['open', []];
  if (platform === 'win32') return ['cmd', ['/c', 'start', '""']];
  if (io.env.DISPLAY || io.env.WAYLAND_DISPLAY) return ['xdg-open', []];
  return undefined;
}

async function openConsole(ctx: Context): Promise<number> {
  const link = await ctx.client().console.createSession({ readOnly: ctx.values['read-only'] === true }, { signal: ctx.signal });
  ctx.out.record({ url: link.url, expiresAt: link.expiresAt, readOnly: link.readOnly });
  const opener = browserOpener(ctx.io);
  if (opener) {
    const [cmd, args] = opener;
    const child = spawn(cmd, [...args, link.url], { stdio: 'ignore', detached: true });
    child.on('error', () => ctx.out.note('Could not open a browser: open the link above yourself.'));
    child.unref();
    ctx.out.note('Opening the console in your browser (the link works once, within 10 minutes).');
  } else {
    ctx.out.note('Open the link in a browser within 10 minutes; it works once.');
  }
  return EXIT.ok;
}

export const CONSOLE_COMMANDS: Record<string, Command> = {
  console: {
    usage: 'console [--read-only]',
    summary: 'print a single-use link to the partner console (and open it when a browser is there)',
    examples: ['partner console', 'partner console --read-only --json | jq -r .url'],
    args: [],
    options: ['read-only'],
    run: openConsole,
  },
};
