// `partner jobs list|get|wait`: the jobs behind every mutation; `wait` is answered the moment one settles.
import type { JobListItem, JobListParams } from '@partner/sdk';
import { EXIT, intOption, showList, UsageError, type Command } from '../command.js';

const JOB_STATUSES = ['processing', 'succeeded', 'failed'] as const;

export const JOB_COMMANDS: Record<string, Command> = {
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
};
