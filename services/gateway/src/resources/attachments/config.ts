// Attachment settings of the gateway, read from the environment (documented in README
// "Attachments"): ATTACHMENT_LIMIT_BYTES, the largest file accepted (default 25 MiB), and
// ATTACHMENT_TRANSFER_TIMEOUT_MS, the deadline of the streaming gRPC call behind one upload or
// download (default 300 s; an upload is also bounded by the HTTP server's REQUEST_RECEIVE_TIMEOUT_MS, 300 s).
import { EnvReader } from '@partner/shared/config/env';

export interface AttachmentConfig {
  limitBytes: number;
  transferTimeoutMs: number;
}

export const DEFAULT_ATTACHMENT_LIMIT_BYTES = 25 * 1024 * 1024;

/** The attachment settings, read as part of the gateway's configuration (readGatewayConfig). */
export function readAttachments(env: EnvReader): AttachmentConfig {
  return {
    limitBytes: env.int('ATTACHMENT_LIMIT_BYTES', {
      default: DEFAULT_ATTACHMENT_LIMIT_BYTES,
      min: 1,
      max: 1024 * 1024 * 1024,
      doc: 'largest attachment accepted, in bytes (413 beyond)',
    }),
    transferTimeoutMs: env.int('ATTACHMENT_TRANSFER_TIMEOUT_MS', { default: 300_000, min: 1_000, max: 3_600_000, doc: 'deadline of one upload\'s or download\'s gRPC stream' }),
  };
}

/** The attachment settings alone, validated. */
export function readAttachmentConfig(env = new EnvReader()): Readonly<AttachmentConfig> {
  return env.done(readAttachments(env));
}
