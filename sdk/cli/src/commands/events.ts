// `partner events tail`: the event feed as it happens (long-poll), resumable by cursor.
import type { FeedEventType } from '@partner/sdk';
import { EXIT, type Command, type Context } from '../command.js';
import { feedStart } from './feed-start.js';

export const EVENT_COMMANDS: Record<string, Command> = {
  'events tail': {
    usage: 'events tail [--types T1,T2] [--from-start | --since TIME | --cursor CURSOR] [--json]',
    summary: 'print events as they happen, from now on (one JSON object a line with --json), until Ctrl-C',
    examples: ['partner events tail', 'partner events tail --types job.failed --json', 'partner events tail --since 2026-11-23T00:00:00Z', 'partner events tail --from-start   # 30 days of history first'],
    args: [],
    options: ['types', 'from-start', 'since', 'cursor'],
    run: (ctx) => tailEvents(ctx),
  },
};

/** `events tail`: follows the feed with long-poll; on Ctrl-C says how to resume where it stopped. */
async function tailEvents(ctx: Context): Promise<number> {
  const v = ctx.values;
  const start = feedStart(v);
  const types = v.types ? (v.types.split(',').map((t) => t.trim()) as FeedEventType[]) : undefined;
  let cursor = v.cursor;
  const params = { ...(types ? { types } : {}), ...start };
  ctx.out.note(`following events ${'from' in start && start.from === 'now' ? 'from now on (--from-start, --since or --cursor to go back)' : 'from where you said'}; Ctrl-C stops`);
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
