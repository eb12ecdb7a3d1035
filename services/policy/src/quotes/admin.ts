// Operator commands for underwriting referrals (`npm run -s admin -- quote referrals|decide`): list the
// referred quotes waiting on an underwriter, and decide one. An approval's new offer is signed by the
// submission service (the owner of the receipt keys, SUBMISSION_GRPC_ADDR), exactly as a job's is;
// the decision and its quote.updated event are one transaction of the policy schema, which the
// policy service's relay publishes.
import { userInfo } from 'node:os';
import type { Pool } from '@partner/shared/db/pg';
import { command, JsonLines, required, UsageError, type CommandGroup } from '@partner/shared/process/admin-cli';
import { EnvReader } from '@partner/shared/config/env';
import { readNats } from '@partner/shared/process/config';
import { natsNames } from '@partner/shared/nats/client';
import { DomainError } from '@partner/shared/domain/errors';
import { isUuid } from '@partner/shared/domain/ids';
import { wallClock } from '@partner/shared/domain/clock';
import { CursorCodec, newCursorSecret } from '@partner/shared/domain/list-cursor';
import { defaultAddress } from '@partner/shared/process/registry';
import { getQuoteById, quoteRecord, referralsWaiting } from './repository.js';
import { PREMIUM, quoteService } from './service.js';

interface AdminDeps {
  withPool<T>(fn: (pool: Pool) => Promise<T>): Promise<T>;
  cursorContext: string;
}

/** Who decides: --by, else the operating system user. */
const operator = (by: string | undefined): string => `operator:${by ?? userInfo().username}`;

/** A referral as `quote referrals` prints it: the quote, whose it is, how long it has waited, and whether it is overdue. */
export function referralLine(row: Parameters<typeof quoteRecord>[0], now: Date) {
  const q = quoteRecord(row);
  return {
    quoteId: q.quoteId,
    tenantId: row.tenant_id,
    partnerId: row.partner_id,
    submissionId: q.submissionId,
    productId: q.productId,
    option: q.option,
    premium: q.premium,
    reasons: q.referral?.reasons ?? [],
    createdAt: q.createdAt,
    dueBy: q.referral?.dueBy ?? null,
    ageSeconds: Math.max(0, Math.floor((now.getTime() - row.created_at.getTime()) / 1000)),
    overdue: row.referral_due_by !== null && row.referral_due_by.getTime() < now.getTime(),
  };
}

export function quoteGroup(deps: AdminDeps): CommandGroup {
  return {
    summary: 'underwriting referrals: list the referred quotes, approve or decline one',
    commands: {
      referrals: command({
        usage: 'quote referrals [--overdue]',
        summary: 'the referred quotes waiting on an underwriter (every tenant), the one due first first, as JSON Lines with ageSeconds and dueBy',
        options: { overdue: { type: 'boolean', help: 'only those past their dueBy' } },
        examples: ['quote referrals', 'quote referrals --overdue'],
        run: async ({ values }) => {
          const now = wallClock.now();
          const rows = await deps.withPool((pool) => referralsWaiting(pool, values.overdue ? { overdueAt: now } : {}));
          return new JsonLines(rows.map((r) => referralLine(r, now)));
        },
      }),
      decide: command({
        usage: 'quote decide --id <uuid> (--approve [--premium <amount>] | --decline --reason <code>) [--note <text>] [--by <name>]',
        summary:
          'decide a referred quote: --approve makes it open with a new validUntil and a new signed offer (at --premium when given); --decline makes it declined with --reason. Records who and when; emits quote.updated. A quote that is not referred: conflict, naming its status',
        options: {
          id: { type: 'string', value: '<uuid>', help: 'the quote' },
          approve: { type: 'boolean', help: 'approve: the quote becomes open' },
          premium: { type: 'string', value: '<amount>', help: 'with --approve: the premium, a decimal string such as 9500.00 (default: the rated one)' },
          decline: { type: 'boolean', help: 'decline: the quote becomes declined' },
          reason: { type: 'string', value: '<code>', help: 'with --decline: the reason code partners see in decline.reasons' },
          note: { type: 'string', value: '<text>', help: 'a note shown in referral.decision.note (at most 500 characters)' },
          by: { type: 'string', value: '<name>', help: 'who decides (default: the operating system user)' },
        },
        examples: [
          'quote decide --id 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a91 --approve --premium 9500.00 --note "Loss history reviewed"',
          'quote decide --id 0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a91 --decline --reason construction_out_of_appetite',
        ],
        run: async ({ values }) => {
          const quoteId = required(values, 'id').toLowerCase();
          if (!isUuid(quoteId)) throw new UsageError(`--id must be a UUID, got "${quoteId}"`);
          if (Boolean(values.approve) === Boolean(values.decline)) throw new UsageError('give exactly one of --approve and --decline');
          if (values.decline && !values.reason) throw new UsageError('--decline needs --reason <code>');
          if (values.decline && values.premium !== undefined) throw new UsageError('--premium goes with --approve only');
          if (values.approve && values.reason !== undefined) throw new UsageError('--reason goes with --decline only');
          if (values.reason !== undefined && !/^[a-z][a-z0-9_]{0,63}$/.test(values.reason)) throw new UsageError('--reason must be a code: lower-case letters, digits and _ (at most 64)');
          if (values.premium !== undefined && !PREMIUM.test(values.premium)) throw new UsageError('--premium must be a decimal string such as 9500.00');
          if (values.note !== undefined && (values.note.length < 1 || values.note.length > 500)) throw new UsageError('--note must be 1-500 characters');
          const outcome = values.approve ? 'approved' : 'declined';
          const env = new EnvReader();
          const nats = env.done(readNats(env));
          const submissionAddr = env.str('SUBMISSION_GRPC_ADDR', { default: defaultAddress('submission'), doc: 'the submission service, which signs offers' });
          return deps.withPool(async (pool) => {
            const quotes = quoteService({
              pool,
              names: natsNames(nats.natsPrefix),
              codec: new CursorCodec([newCursorSecret()], deps.cursorContext),
              // The policy service's relay publishes the event from the outbox.
              published: () => {},
              newId: () => {
                throw new Error('a decision creates no quote');
              },
            });
            const row = await getQuoteById(pool, quoteId);
            if (!row) throw new DomainError('not_found', `quote ${quoteId} not found`);
            const owner = { tenantId: row.tenant_id, partnerId: row.partner_id };
            const prepared = await quotes.PrepareDecision({ owner: null, quoteId, outcome, premium: values.premium ?? '', jobId: '', clockTime: '' });
            let offer = { jws: '', sha256: '' };
            if (prepared.offerClaimsJson !== '') {
              // Loaded here: the gRPC client and the protos are only this command's (the other commands start faster).
              const { createClient, serviceDefs } = await import('@partner/shared/grpc');
              const submission = createClient(serviceDefs().submission, submissionAddr, 10_000, { callStreams: false });
              try {
                offer = await submission.SignOffer({ owner, claimsJson: prepared.offerClaimsJson });
              } finally {
                submission.close();
              }
            }
            const decided = await quotes.DecideQuote({
              owner: null,
              quoteId,
              outcome,
              note: values.note ?? '',
              decidedBy: operator(values.by),
              jobId: '',
              offerClaimsJson: prepared.offerClaimsJson,
              offerJws: offer.jws,
              offerSha256: offer.sha256,
              reason: values.reason ?? '',
            });
            return JSON.parse(decided.quote.recordJson!) as object;
          });
        },
      }),
    },
  };
}
