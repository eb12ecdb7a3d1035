// `partner submissions withdraw ID --reason R [--note TEXT]`: take a submission back (a job, like
// every mutation). A withdrawn submission stops holding its risk (docs/api.md "Clearance").
import type { WithdrawalReason } from '@partner/sdk';
import { mutation, UsageError, type Command } from '../command.js';

export const WITHDRAWAL_REASONS = ['duplicate', 'applicant_withdrew', 'entered_in_error', 'other'];

export const WITHDRAW_COMMANDS: Record<string, Command> = {
  'submissions withdraw': {
    usage: 'submissions withdraw SUBMISSION_ID --reason duplicate|applicant_withdrew|entered_in_error|other [--note TEXT] [--wait SECONDS] [--idempotency-key KEY]',
    summary: 'withdraw a submission and wait for it (exit 1 with not_withdrawable if it is withdrawn already)',
    examples: [
      'partner submissions withdraw 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71 --reason applicant_withdrew --note "Placed elsewhere."',
      'partner submissions withdraw 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71 --reason entered_in_error --wait 0   # returns the job',
    ],
    args: ['SUBMISSION_ID'],
    options: ['reason', 'note', 'wait', 'idempotency-key'],
    run: async (ctx, [id]) => {
      const reason = ctx.values.reason;
      if (!reason || !WITHDRAWAL_REASONS.includes(reason)) throw new UsageError(`--reason is required: one of ${WITHDRAWAL_REASONS.join(', ')}`);
      const note = ctx.values.note;
      const input = { reason: reason as WithdrawalReason, ...(note !== undefined ? { note } : {}) };
      const client = ctx.client();
      return mutation(ctx, 'withdrawal', (opts) => client.withdrawSubmission(id!, input, opts));
    },
  },
};
