// `partner clocks create|advance|list|delete` (UAT only, docs/partners.md "Testing time"): a test
// clock to create submissions on (`partner submissions create --clock ID`), moved forward so quotes
// expire and policies take effect in seconds. Create, advance and delete are jobs, waited for like
// every mutation.
import { intOption, mutation, showList, UsageError, type Command } from '../command.js';

const COLUMNS: [string, string][] = [
  ['frozenTime', 'time'],
  ['status', 'status'],
  ['name', 'name'],
  ['testClockId', 'id'],
];

/** --time as the API takes it: RFC 3339 with a zone (the gateway names a bad one, 400). */
function timeOption(value: string | undefined): string {
  if (!value) throw new UsageError('--time is required: an RFC 3339 time with a zone, e.g. 2027-01-01T00:00:00Z');
  return value;
}

export const CLOCK_COMMANDS: Record<string, Command> = {
  'clocks create': {
    usage: 'clocks create --time TIME [--name TEXT] [--wait SECONDS] [--idempotency-key KEY]',
    summary: 'create a test clock stopped at TIME (UAT only; at most 10 live clocks)',
    examples: ['partner clocks create --time 2027-01-01T00:00:00Z --name renewals', 'partner clocks create --time 2027-01-01T00:00:00Z --json'],
    args: [],
    options: ['time', 'name', 'wait', 'idempotency-key'],
    run: async (ctx) => {
      const frozenTime = timeOption(ctx.values.time);
      const client = ctx.client();
      return mutation(ctx, 'test clock', (opts) => client.testClocks.create({ frozenTime, ...(ctx.values.name ? { name: ctx.values.name } : {}) }, opts));
    },
  },
  'clocks advance': {
    usage: 'clocks advance CLOCK_ID --time TIME [--wait SECONDS] [--idempotency-key KEY]',
    summary: 'move a test clock forward to TIME (at most two years); every quote expiry and policy change due happens, in time order, before it returns',
    examples: ['partner clocks advance clk_4f1c2b7d9e0a3c5b8d6e1f20 --time 2027-02-01T00:00:00Z'],
    args: ['CLOCK_ID'],
    options: ['time', 'wait', 'idempotency-key'],
    run: async (ctx, [id]) => {
      const frozenTime = timeOption(ctx.values.time);
      const client = ctx.client();
      return mutation(ctx, 'clock advance', (opts) => client.testClocks.advance(id!, frozenTime, opts));
    },
  },
  'clocks list': {
    usage: 'clocks list [--limit N] [--cursor C] [--all]',
    summary: 'your live test clocks, newest first',
    examples: ['partner clocks list', 'partner clocks list --all --json'],
    args: [],
    options: ['limit', 'cursor', 'all'],
    run: async (ctx) => {
      const limit = intOption(ctx.values, 'limit');
      const params = limit !== undefined ? { limit } : {};
      const client = ctx.client();
      return showList(
        ctx,
        async (cursor) => client.testClocks.list({ ...params, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
        () => client.testClocks.iterate(params, { signal: ctx.signal }),
        COLUMNS,
      );
    },
  },
  'clocks delete': {
    usage: 'clocks delete CLOCK_ID [--wait SECONDS] [--idempotency-key KEY]',
    summary: 'delete a test clock (its submissions keep their state and stop moving)',
    examples: ['partner clocks delete clk_4f1c2b7d9e0a3c5b8d6e1f20'],
    args: ['CLOCK_ID'],
    options: ['wait', 'idempotency-key'],
    run: async (ctx, [id]) => {
      const client = ctx.client();
      return mutation(ctx, 'clock delete', (opts) => client.testClocks.delete(id!, opts));
    },
  },
};
