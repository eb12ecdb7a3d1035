// `partner policies list|get`: the partner's policies, newest first.
import type { PolicyListParams, PolicyStatus } from '@partner/sdk';
import { EXIT, intOption, POLICY_STATUSES, UsageError, type Command } from '../command.js';

export const POLICY_COMMANDS: Record<string, Command> = {
  'policies list': {
    usage: 'policies list [--status S] [--product-id ID] [--policy-number N] [--updated-since TS] [--limit N] [--cursor C] [--all]',
    summary: 'list policies, newest first (one page, or --all)',
    examples: ['partner policies list --status active --limit 20', 'partner policies list --all --json > policies.json', 'partner policies list --updated-since 2026-11-01T00:00:00Z'],
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
    examples: ['partner policies get 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71'],
    args: ['POLICY_ID'],
    options: [],
    run: async (ctx, [id]) => {
      ctx.out.record(await ctx.client().getPolicy(id!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
};
