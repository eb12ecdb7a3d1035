// Builds the submission service: submissions and their attachments over gRPC, and the sweep of
// abandoned uploads.
import { applicantFromMessage } from '@partner/shared/domain/applicant';
import { implementWithStreaming, serviceDefs, SERVICE_NAMES } from '@partner/shared/grpc';
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { isJobId, isUuid } from '@partner/shared/domain/ids';
import { dbError } from '@partner/shared/db/pg';
import { dbBatcher } from '@partner/shared/db/batcher';
import { startProcess, type RunningProcess, type StartOptions } from '@partner/shared/process/start';
import { natsNames } from '@partner/shared/nats/client';
import { eventOutbox } from '@partner/shared/nats/event-outbox';
import { EVENT_OUTBOX_METRICS, OutboxRelay } from '@partner/shared/nats/outbox-relay';
import type { SubmissionConfig } from './config.js';
import * as repo from './repo.js';
import { createSubmission, createSubmissions, riskJsonOf, type NewSubmission } from './intake.js';
import { toProto } from './submission-row.js';
import { PgBlobStore } from './blob-store.js';
import { attachmentService, sweepAttachments } from './attachments.js';
import { submissionMetrics } from './metrics.js';
import { listSubmissions, loadSubmissionCursorCodec, parseListSubmissions } from './list.js';
import { withdrawRpc } from './withdraw.js';
import { completeBind, releaseBind, reserveBind } from './bind.js';
import { clearanceMetrics } from './clearance-metrics.js';
import { receivedAtOf, startReceipts } from './receipts/start.js';
import { MIGRATIONS_DIR, SCHEMA } from './schema.js';

export function startSubmission(config: SubmissionConfig, opts: StartOptions = {}): Promise<RunningProcess> {
  return startProcess({
    name: 'submission',
    config,
    ...opts,
    db: { schema: SCHEMA, migrationsDir: MIGRATIONS_DIR },
    nats: { connect: 'later' },
    build: async ({ pool, registry, logger, nats, every }) => {
      const metrics = submissionMetrics(registry);
      const clearance = clearanceMetrics(registry, pool);
      const cursors = await loadSubmissionCursorCodec(pool).catch(dbError);
      const store = new PgBlobStore(pool);
      // Events (submission.created, attachment.*) are recorded in their change's transaction and
      // published to the events stream by this relay; NATS may come later (they wait in the outbox).
      const names = natsNames(config.natsPrefix);
      const events = new OutboxRelay(pool, eventOutbox(names, config.eventsStream), {
        intervalMs: config.relayIntervalMs,
        logger,
        gauges: { registry, prefix: EVENT_OUTBOX_METRICS },
      });
      events.start();
      nats.onConnect((conn) => events.attach(conn));
      const receipts = await startReceipts(pool, config.receipts, logger);
      const attachments = attachmentService({ pool, store, settings: config.attachments, metrics, logger, names, events, receipts: receipts.issuing });
      every({
        name: 'attachment sweep',
        intervalMs: config.attachments.sweepIntervalMs,
        run: async () => {
          const r = await sweepAttachments(pool, store, config.attachments);
          metrics.swept(r);
          if (r.abandonedRemoved + r.deletedPurged + r.deletedDropped > 0) logger.info(r, 'attachment sweep');
        },
      });
      // CreateSubmission commits concurrent calls together (shared/db/batcher.ts); a lone call runs alone.
      const creates = dbBatcher('CreateSubmission', (inputs: NewSubmission[]) => createSubmissions(pool, names, inputs, receipts.issuing), {
        config,
        registry,
        keyOf: (s) => s.jobId,
      });
      const impl = implementWithStreaming(
        serviceDefs().submission,
        {
          ...attachments,
          ...receipts.rpcs,
          CreateSubmission: async (req) => {
            if (!isJobId(req.jobId) || !req.owner?.tenantId || !req.owner.partnerId || !req.applicant?.legalName || !isUuid(req.productId)) {
              throw new DomainError('validation_error', 'job_id, owner, applicant.legal_name and a UUID product_id are required');
            }
            if (req.contentSha256 !== '' && !/^[0-9a-f]{64}$/.test(req.contentSha256)) {
              throw new DomainError('validation_error', 'content_sha256 must be 64 lowercase hex digits');
            }
            const out = await createSubmission(pool, names, {
              jobId: req.jobId,
              tenantId: req.owner.tenantId,
              partnerId: req.owner.partnerId,
              principalId: req.principalId || null,
              externalRef: req.externalRef,
              submissionType: req.submissionType,
              effectiveDate: req.effectiveDate,
              productId: req.productId,
              applicant: applicantFromMessage(req.applicant),
              requirementsVersion: Number(req.requirementsVersion),
              attachmentRulesJson: req.attachmentRulesJson || '[]',
              riskJson: riskJsonOf(req.riskJson),
              contentSha256: req.contentSha256 || null,
              testClockId: req.testClockId || null,
              receivedAt: receivedAtOf(req.receivedAt),
            }, (s) => creates.call(s)).catch(dbError);
            if (out.event) events.publishNow(out.event.outboxId, out.event);
            if (out.created) {
              metrics.created();
              clearance.decided(out.row);
            }
            return { submission: toProto(out.row), receipt: out.receipt };
          },
          GetSubmission: async (req) => {
            const row = !req.owner
              ? undefined
              : req.jobId
                ? isJobId(req.jobId)
                  ? await repo.getSubmissionOfJob(pool, req.owner.tenantId, req.owner.partnerId, req.jobId).catch(dbError)
                  : undefined
                : isUuid(req.submissionId)
                  ? await repo.getSubmission(pool, req.owner.tenantId, req.owner.partnerId, req.submissionId).catch(dbError)
                  : undefined;
            if (!row) throw notFound('submission');
            return { submission: toProto(row) };
          },
          WithdrawSubmission: withdrawRpc({ pool, names, events, metrics: clearance }),
          ReserveBind: async (req) => {
            if (!isJobId(req.jobId) || !req.owner?.tenantId || !req.owner.partnerId || !isUuid(req.quoteId) || !/^[0-9a-f]{64}$/.test(req.offerSha256)) {
              throw new DomainError('validation_error', 'job_id, owner, quote_id and offer_sha256 are required');
            }
            if (!isUuid(req.submissionId)) throw notFound('submission');
            const out = await reserveBind(pool, receipts.issuing, {
              owner: { tenantId: req.owner.tenantId, partnerId: req.owner.partnerId },
              jobId: req.jobId,
              submissionId: req.submissionId.toLowerCase(),
              quoteId: req.quoteId.toLowerCase(),
              offerSha256: req.offerSha256,
              receivedAt: req.receivedAt,
            }).catch(dbError);
            return { submission: toProto(out.row), receipt: out.receipt };
          },
          CompleteBind: async (req) => {
            if (!isJobId(req.jobId) || !req.owner?.tenantId || !req.owner.partnerId || !isUuid(req.policyId) || !req.policyNumber) {
              throw new DomainError('validation_error', 'job_id, owner, policy_id and policy_number are required');
            }
            if (!isUuid(req.submissionId)) throw notFound('submission');
            const out = await completeBind(pool, names, receipts.issuing, {
              owner: { tenantId: req.owner.tenantId, partnerId: req.owner.partnerId },
              jobId: req.jobId,
              submissionId: req.submissionId.toLowerCase(),
              policyId: req.policyId,
              policyNumber: req.policyNumber,
              documents: req.documents.map((d) => ({ documentId: d.documentId, sha256: d.sha256 })),
              receivedAt: req.receivedAt,
            }).catch(dbError);
            for (const e of out.events) events.publishNow(e.outboxId, e);
            return { submission: toProto(out.row), receipt: out.receipt };
          },
          ReleaseBind: async (req) => {
            if (!isJobId(req.jobId) || !req.owner?.tenantId || !req.owner.partnerId) throw new DomainError('validation_error', 'job_id and owner are required');
            if (!isUuid(req.submissionId)) throw notFound('submission');
            await releaseBind(pool, { tenantId: req.owner.tenantId, partnerId: req.owner.partnerId }, req.jobId, req.submissionId.toLowerCase()).catch(dbError);
            return {};
          },
          ListSubmissions: async (req) => {
            const page = await listSubmissions(pool, parseListSubmissions(req, cursors), cursors).catch(dbError);
            return { submissions: page.rows.map(toProto), nextPageToken: page.nextCursor };
          },
        },
        logger,
        { registry },
      );
      return {
        grpc: [{ name: SERVICE_NAMES.submission, def: serviceDefs().submission, impl }],
        stop: () => events.stop(),
      };
    },
  });
}
