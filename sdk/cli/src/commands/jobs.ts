// `partner jobs list|get|wait|cancel`: the jobs behind every mutation; `wait` is answered the moment
// one settles; `cancel` stops one that has not started.
import { JobNotCancelableError, type JobListItem, type JobListParams } from '@partner/sdk';
import { EXIT, intOption, showList, UsageError, type Command } from '../command.js';

const JOB_STATUSES = ['processing', 'succeeded', 'failed', 'canceled'] as const;

export const JOB_COMMANDS: Record<string, Command> = {
  'jobs list': {
    usage: 'jobs list [--status processing|succeeded|failed|canceled] [--kind KIND] [--created-since TS] [--created-before TS] [--limit N] [--cursor C] [--all]',
    summary: 'your jobs, newest first: find the ones still running, or the ones that failed or were cancelled',
    examples: ['partner jobs list --status failed --created-since 2026-11-20T00:00:00Z', 'partner jobs list --kind submission.create --all --json'],
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
    examples: ['partner jobs get job_0199a3e47c1d7b529a0e3f2d4c5b6a72'],
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
    examples: ['partner jobs wait job_0199a3e47c1d7b529a0e3f2d4c5b6a72', 'partner jobs wait job_0199a3e47c1d7b529a0e3f2d4c5b6a72 --timeout 30'],
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
        // Cancelled: settled, and it never took effect.
        if (job.status === 'canceled') return EXIT.apiError;
        return EXIT.ok;
      } finally {
        ctx.progress.done();
      }
    },
  },
  'jobs cancel': {
    usage: 'jobs cancel JOB_ID',
    summary:
      'cancel a job that has not started: it never takes effect. Of a cancel and the job starting, exactly one wins; ' +
      'exit 0 when the cancel did (again 0 for a job already cancelled), 1 with job_not_cancelable when the job had started or settled',
    examples: [
      'partner jobs cancel job_0199a3e47c1d7b529a0e3f2d4c5b6a72',
      'partner jobs cancel job_0199a3e47c1d7b529a0e3f2d4c5b6a72 --json   # exit 1 with job_not_cancelable once the job has started',
    ],
    args: ['JOB_ID'],
    options: [],
    run: async (ctx, [id]) => {
      try {
        ctx.out.record(await ctx.client().cancelJob(id!, { signal: ctx.signal }));
        return EXIT.ok;
      } catch (err) {
        if (err instanceof JobNotCancelableError) ctx.out.note(`job ${id} had already started or settled, so it goes to its own outcome; see it with: partner jobs wait ${id}`);
        throw err;
      }
    },
  },
};
