// `partner jobs list` and `partner submissions list`: the reconciliation lists ("lost a job handle?
// find it by externalRef"), one page or --all, as a table on a terminal and JSON otherwise.
import type { JobListItem, JobListParams, Page, Submission, SubmissionListParams } from '@partner/sdk';
import { EXIT, intOption, UsageError, type Command, type Context } from './cli.js';

const JOB_STATUSES = ['processing', 'succeeded', 'failed'] as const;

/** One page (with the cursor of the next in the footer), or with --all every page. */
async function showList<T extends object>(
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

export const LIST_COMMANDS: Record<string, Command> = {
  'jobs list': {
    usage: 'jobs list [--status processing|succeeded|failed] [--kind KIND] [--created-since TS] [--created-before TS] [--limit N] [--cursor C] [--all]',
    summary: 'your jobs, newest first: find the ones still running, or the ones that failed',
    args: [],
    options: ['status', 'kind', 'created-since', 'created-before', 'limit', 'cursor', 'all'],
    run: async (ctx) => {
      const v = ctx.values;
      if (v.status !== undefined && !(JOB_STATUSES as readonly string[]).includes(v.status)) {
        throw new UsageError(`--status must be one of ${JOB_STATUSES.join(', ')}`);
      }
      const limit = intOption(v, 'limit');
      const params: JobListParams = {
        ...(v.status ? { status: v.status as JobListParams['status'] } : {}),
        ...(v.kind ? { kind: v.kind } : {}),
        ...(v['created-since'] ? { createdSince: v['created-since'] } : {}),
        ...(v['created-before'] ? { createdBefore: v['created-before'] } : {}),
        ...(limit !== undefined ? { limit } : {}),
      };
      const client = ctx.client();
      return showList<JobListItem>(
        ctx,
        (cursor) => client.listJobs({ ...params, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
        () => client.iterateJobs(params, { signal: ctx.signal }),
        [
          ['id', 'id'],
          ['kind', 'kind'],
          ['status', 'status'],
          ['error.code', 'error'],
          ['createdAt', 'created'],
          ['updatedAt', 'updated'],
        ],
      );
    },
  },
  'submissions list': {
    usage: 'submissions list [--external-ref REF] [--status S] [--created-since TS] [--updated-since TS] [--principal-id ID] [--limit N] [--cursor C] [--all]',
    summary: 'your submissions, newest first (--external-ref REF finds the one a lost job handle created)',
    args: [],
    options: ['external-ref', 'status', 'created-since', 'updated-since', 'principal-id', 'limit', 'cursor', 'all'],
    run: async (ctx) => {
      const v = ctx.values;
      const limit = intOption(v, 'limit');
      const params: SubmissionListParams = {
        ...(v['external-ref'] !== undefined ? { externalRef: v['external-ref'] } : {}),
        ...(v.status ? { status: v.status as SubmissionListParams['status'] } : {}),
        ...(v['created-since'] ? { createdSince: v['created-since'] } : {}),
        ...(v['updated-since'] ? { updatedSince: v['updated-since'] } : {}),
        ...(v['principal-id'] ? { principalId: v['principal-id'] } : {}),
        ...(limit !== undefined ? { limit } : {}),
      };
      const client = ctx.client();
      return showList<Submission>(
        ctx,
        (cursor) => client.listSubmissions({ ...params, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
        () => client.iterateSubmissions(params, { signal: ctx.signal }),
        [
          ['externalRef', 'external ref'],
          ['submissionName', 'name'],
          ['status', 'status'],
          ['createdAt', 'created'],
          ['submissionId', 'id'],
        ],
      );
    },
  },
};
