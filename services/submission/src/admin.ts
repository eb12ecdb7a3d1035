// Operator commands of the submission service: the clearance queue and decisions.
// Reached through `npm run -s admin -- clearance <command>`.
import { userInfo } from 'node:os';
import type { Pool } from '@partner/shared/db/pg';
import { command, identifier, required, UsageError, type CommandGroup, withAdminPool } from '@partner/shared/process/admin-cli';
import { isUuid } from '@partner/shared/domain/ids';
import { EnvReader } from '@partner/shared/config/env';
import { natsNames } from '@partner/shared/nats/client';
import { MIGRATIONS_DIR, SCHEMA } from './schema.js';
import { clearanceQueue, decideByOperator } from './clearance.js';
import { readSubmissionConfig } from './config.js';
import { toProto } from './submission-row.js';
import { submissionRecord } from '@partner/shared/domain/submission-record';
import type { Submission__Output } from '@partner/shared/generated/partner/submission/v1/Submission';

const withPool = <T>(fn: (pool: Pool) => Promise<T>): Promise<T> =>
  withAdminPool({ name: 'submission', schema: SCHEMA, migrationsDir: MIGRATIONS_DIR }, fn);

const NOTE_MAX = 500;

export const clearance: CommandGroup = {
  summary: 'the clearance queue: list the submissions blocked or in review, decide one',
  commands: {
    list: command({
      usage: 'clearance list --tenant T [--status blocked|review] [--limit N]',
      summary: "the tenant's live blocked and review submissions, oldest first, each with the live submissions of its risk (all partners)",
      options: {
        tenant: { type: 'string', value: 'T', help: 'the tenant whose queue to list' },
        status: { type: 'string', value: 'blocked|review', help: 'only submissions with this clearance (default: both)' },
        limit: { type: 'string', value: 'N', help: 'at most this many, 1 to 1000 (default 100)' },
      },
      examples: ['clearance list --tenant demo --status review'],
      run: async ({ values }) => {
        const tenantId = identifier(required(values, 'tenant'), 'tenant');
        const status = values.status;
        if (status !== undefined && status !== 'blocked' && status !== 'review') throw new UsageError('--status must be blocked or review');
        const limit = values.limit === undefined ? 100 : Number(values.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be an integer from 1 to 1000');
        return withPool(async (pool) => ({ items: await clearanceQueue(pool, tenantId, status, limit) }));
      },
    }),
    decide: command({
      usage: 'clearance decide --submission ID --status cleared|blocked [--note TEXT] [--by NAME] [--force]',
      summary:
        "record an operator's clearance decision (who, when, note), sent to the partner as submission.clearance_changed; prints the submission",
      options: {
        submission: { type: 'string', value: 'ID', help: 'the submission id (a UUID)' },
        status: { type: 'string', value: 'cleared|blocked', help: 'the decision' },
        note: { type: 'string', value: 'TEXT', help: `why, up to ${NOTE_MAX} characters, recorded with the decision` },
        by: { type: 'string', value: 'NAME', help: 'who decided (default: your user name)' },
        force: { type: 'boolean', help: 'clear it although another live submission holds the same risk' },
      },
      examples: ['clearance decide --submission 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71 --status cleared --note "checked with the broker"'],
      run: async ({ values }) => {
        const submissionId = required(values, 'submission').toLowerCase();
        if (!isUuid(submissionId)) throw new UsageError(`--submission must be a UUID, got "${submissionId}"`);
        const status = required(values, 'status');
        if (status !== 'cleared' && status !== 'blocked') throw new UsageError('--status must be cleared or blocked');
        const note = values.note?.trim() || null;
        if (note !== null && [...note].length > NOTE_MAX) throw new UsageError(`--note must be at most ${NOTE_MAX} characters`);
        const by = values.by?.trim() || userInfo().username;
        // The event goes to the running service's outbox relay (its stream names come from the same settings).
        const names = natsNames(readSubmissionConfig(new EnvReader()).natsPrefix);
        return withPool(async (pool) => {
          // A refusal (DecisionRefused: the risk is held, the submission is withdrawn) exits 1 with its message.
          const out = await decideByOperator(pool, names, { submissionId, status, by, note, force: values.force === true });
          return { submission: submissionRecord(toProto(out.row) as Submission__Output), decidedBy: by, ...(out.heldBy.length ? { heldBy: out.heldBy } : {}) };
        });
      },
    }),
  },
};

export const groups: Record<string, CommandGroup> = { clearance };
