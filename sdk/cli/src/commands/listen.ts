// `partner listen --forward-to URL`: webhooks on your own machine without a public endpoint. It follows
// the event feed (long-poll) and POSTs each event to the local URL signed exactly like a real delivery
// (Standard Webhooks headers) with a local secret it prints, so the receiver's verification code runs
// unchanged. Ctrl-C stops it and says how to resume.
import { webhooks, type FeedEventType } from '@partner/sdk';
import { EXIT, UsageError, type Command, type Context } from '../command.js';
import { feedStart } from './feed-start.js';

export const LISTEN_COMMANDS: Record<string, Command> = {
  listen: {
    usage: 'listen --forward-to URL [--types T1,T2] [--from-start | --since TIME | --cursor CURSOR] [--secret whsec_…]',
    summary: 'forward your events to a local receiver, signed like real webhook deliveries, until Ctrl-C',
    examples: [
      'partner listen --forward-to http://localhost:3000/hooks',
      'partner listen --forward-to http://localhost:3000/hooks --types submission.created --secret whsec_…',
    ],
    args: [],
    options: ['forward-to', 'types', 'from-start', 'since', 'cursor', 'secret'],
    run: (ctx) => listen(ctx),
  },
};

async function listen(ctx: Context): Promise<number> {
  const v = ctx.values;
  const target = v['forward-to'];
  if (!target) throw new UsageError('--forward-to is required: the local URL of your receiver, e.g. http://localhost:3000/hooks');
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new UsageError(`--forward-to ${target} is not a URL`);
  }
  // From now on unless told otherwise: a listener forwards what happens while it runs.
  const start = feedStart(v);
  if (v.secret !== undefined && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(v.secret)) throw new UsageError('--secret must be a whsec_… secret');
  const secret = v.secret ?? webhooks.newSecret();
  const types = v.types ? (v.types.split(',').map((t) => t.trim()) as FeedEventType[]) : undefined;
  let cursor = v.cursor;
  const params = { ...(types ? { types } : {}), ...start };
  ctx.out.note(`forwarding events to ${url.href}; verify them with the signing secret ${secret}${v.secret ? '' : ' (pass --secret to keep it)'}; Ctrl-C stops`);
  for await (const event of ctx.client().followEvents(params, { signal: ctx.signal, onCursor: (c) => (cursor = c) })) {
    const body = JSON.stringify(event);
    const headers = { 'content-type': 'application/json', 'user-agent': 'partner-cli-listen', ...webhooks.sign(body, secret, { id: event.id }) };
    let outcome: string;
    try {
      const res = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(10_000)]) });
      await res.arrayBuffer().catch(() => undefined);
      outcome = String(res.status);
    } catch (err) {
      if (ctx.signal.aborted) break;
      outcome = `failed (${(err as Error).message})`;
    }
    if (ctx.out.json) ctx.io.stdout.write(`${JSON.stringify({ id: event.id, type: event.type, forwardedTo: url.href, status: outcome })}\n`);
    else ctx.io.stdout.write(`${new Date().toISOString()}  ${event.type.padEnd(26)}  ${event.id}  → ${outcome}\n`);
  }
  if (cursor) ctx.out.note(`stopped; resume with: partner listen --forward-to ${url.href} --cursor ${cursor}${v.types ? ` --types ${v.types}` : ''} --secret ${secret}`);
  return EXIT.ok;
}
