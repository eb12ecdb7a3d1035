// Submission service configuration (environment variables; see README "Configuration").
import { EnvReader } from '@partner/shared/config/env';
import { readBase, readDb, readNats, type BaseConfig, type DbConfig, type NatsConfig } from '@partner/shared/process/config';
import { readEventStream, type EventStreamConfig } from '@partner/shared/nats/event-outbox';
import { defaultPort } from '@partner/shared/process/registry';
import { readReceiptSettings, type ReceiptSettings } from './receipts/config.js';

export interface AttachmentSettings {
  /** Ceiling on any upload, whatever limit the caller declares (the gateway's is the effective one). */
  maxBytes: number;
  /** Staged uploads no job promoted within this are removed by the sweep. */
  stagedTtlMs: number;
  /** Uploads still receiving after this (their process died mid-upload) are removed by the sweep. */
  receivingTtlMs: number;
  /** Records of deleted attachments are kept this long (so a redelivered delete job succeeds). */
  deletedRetentionMs: number;
  /** How often the sweep runs; 0 turns it off. */
  sweepIntervalMs: number;
}

export interface SubmissionConfig extends BaseConfig, DbConfig, NatsConfig, EventStreamConfig {
  grpcPort: number;
  /** How often the event relay looks for outbox rows its fast path did not publish. */
  relayIntervalMs: number;
  attachments: AttachmentSettings;
  receipts: ReceiptSettings;
}

const HOUR = 3_600_000;

export function readSubmissionConfig(env = new EnvReader()): Readonly<SubmissionConfig> {
  return env.done({
    ...readBase(env, 'submission', defaultPort('submission', 'ops')),
    ...readDb(env, { batchInFlight: 1 }),
    ...readNats(env),
    ...readEventStream(env),
    receipts: readReceiptSettings(env),
    relayIntervalMs: env.int('OUTBOX_RELAY_INTERVAL_MS', { default: 1_000, min: 50, max: 60_000, doc: 'how often the event relay publishes what the fast path could not' }),
    grpcPort: env.int('SUBMISSION_GRPC_PORT', { default: defaultPort('submission', 'grpc'), min: 0, max: 65535, doc: 'the submission service\'s gRPC port' }),
    attachments: {
      maxBytes: env.int('ATTACHMENT_MAX_BYTES', { default: 100 * 1024 * 1024, min: 1, max: 2 ** 40, doc: "the service's own ceiling on one upload, whatever limit the caller declares (the gateway's ATTACHMENT_LIMIT_BYTES is the effective one)" }),
      stagedTtlMs: env.int('ATTACHMENT_STAGED_TTL_MS', { default: 24 * HOUR, min: 0, max: 30 * 24 * HOUR, doc: 'staged uploads no job promoted within this are removed by the sweep' }),
      receivingTtlMs: env.int('ATTACHMENT_RECEIVING_TTL_MS', { default: HOUR, min: 0, max: 30 * 24 * HOUR, doc: 'uploads still receiving after this (their process died mid-upload) are removed by the sweep' }),
      deletedRetentionMs: env.int('ATTACHMENT_DELETED_RETENTION_MS', { default: 7 * 24 * HOUR, min: 0, max: 365 * 24 * HOUR, doc: 'records of deleted attachments are kept this long (so a redelivered delete job succeeds)' }),
      sweepIntervalMs: env.int('ATTACHMENT_SWEEP_INTERVAL_MS', { default: 10 * 60_000, min: 0, max: 24 * HOUR, doc: 'how often the attachment sweep runs; 0 turns it off' }),
    },
  });
}
