// `partner submissions create|get|list`: new business, read back, and found again by reference.
import type { PartnerClient, Submission, SubmissionListParams } from '@partner/sdk';
import { reportValidation } from './products.js';
import { EXIT, intOption, mutation, parseJson, readAll, readJsonFile, showList, UsageError, type Command } from '../command.js';

export const SUBMISSION_COMMANDS: Record<string, Command> = {
  'submissions create': {
    usage: 'submissions create --file app.json|- [--clock CLOCK_ID] [--validate] [--wait SECONDS] [--idempotency-key KEY]',
    summary: 'create a submission and wait for it (default 60 s; --wait 0 returns the job at once; --validate checks it first)',
    examples: [
      'partner submissions create --file app.json',
      'cat app.json | partner submissions create --file -',
      'partner submissions create --file app.json --wait 0     # returns the job; follow it with partner jobs wait',
      'partner submissions create --file app.json --validate   # checks it against the product\'s requirements first',
      'partner submissions create --file app.json --clock clk_4f1c2b7d9e0a3c5b8d6e1f20   # UAT: on a test clock',
    ],
    args: [],
    options: ['file', 'clock', 'validate', 'wait', 'idempotency-key'],
    run: async (ctx) => {
      if (!ctx.values.file) throw new UsageError('--file is required: a JSON file with the submission (- reads standard input)');
      const read = (ctx.values.file === '-' ? parseJson('standard input', await readAll(ctx.io.stdin)) : readJsonFile(ctx.values.file)) as Parameters<
        PartnerClient['createSubmission']
      >[0];
      // --clock (UAT): the submission lives on that test clock.
      const input = ctx.values.clock ? { ...read, testClockId: ctx.values.clock } : read;
      const client = ctx.client();
      if (ctx.values.validate) {
        // Nothing is created when the body would fail: the problems are printed, exit status 1.
        const verdict = await client.validateSubmission(input, { signal: ctx.signal });
        if (!verdict.valid) return reportValidation(ctx, verdict);
      }
      return mutation(ctx, 'submission', (opts) => client.createSubmission(input, opts), (opts) => client.startSubmission(input, opts));
    },
  },
  'submissions get': {
    usage: 'submissions get SUBMISSION_ID',
    summary: 'one submission',
    examples: ['partner submissions get 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71'],
    args: ['SUBMISSION_ID'],
    options: [],
    run: async (ctx, [id]) => {
      ctx.out.record(await ctx.client().getSubmission(id!, { signal: ctx.signal }));
      return EXIT.ok;
    },
  },
  'submissions list': {
    usage: 'submissions list [--external-ref REF] [--status S] [--clearance C] [--created-since TS] [--updated-since TS] [--principal-id ID] [--limit N] [--cursor C] [--all]',
    summary: 'your submissions, newest first (--external-ref REF finds the one a lost job handle created)',
    examples: ['partner submissions list --external-ref BROKER-REF-2041', 'partner submissions list --created-since 2026-11-01T00:00:00Z --all'],
    args: [],
    options: ['external-ref', 'status', 'clearance', 'created-since', 'updated-since', 'principal-id', 'limit', 'cursor', 'all'],
    run: async (ctx) => {
      const v = ctx.values;
      const limit = intOption(v, 'limit');
      const params: SubmissionListParams = {
        ...(v['external-ref'] !== undefined ? { externalRef: v['external-ref'] } : {}),
        ...(v.status ? { status: v.status as SubmissionListParams['status'] } : {}),
        ...(v.clearance ? { clearance: v.clearance as SubmissionListParams['clearance'] } : {}),
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
          ['clearance.status', 'clearance'],
          ['createdAt', 'created'],
          ['submissionId', 'id'],
        ],
      );
    },
  },
};
