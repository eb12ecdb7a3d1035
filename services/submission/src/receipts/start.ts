// The receipts part of the submission service: its keys opened at start (re-sealed after a KEK
// rotation, the first one made on a fresh database), what the creating paths need to issue receipts,
// and the receipt RPCs.
import { DomainError } from '@partner/shared/domain/errors';
import { parseTimestamp } from '@partner/shared/domain/time';
import type { Pool } from '@partner/shared/db/pg';
import type { Logger } from '@partner/shared/telemetry/logger';
import type { ReceiptSettings } from './config.js';
import type { ReceiptIssuing } from './issue.js';
import { ReceiptKeyring } from './keys.js';
import { loadReceiptCursorCodec, receiptService } from './service.js';
import { parseOfferTerms, signOffer } from './offers.js';
import type { SignOfferRequest__Output } from '@partner/shared/generated/partner/submission/v1/SignOfferRequest';
import type { SignOfferResponse } from '@partner/shared/generated/partner/submission/v1/SignOfferResponse';
import { dbError } from '@partner/shared/db/pg';

export async function startReceipts(
  pool: Pool,
  settings: ReceiptSettings,
  logger: Logger,
): Promise<{
  issuing: ReceiptIssuing | undefined;
  rpcs: ReturnType<typeof receiptService> & { SignOffer(req: SignOfferRequest__Output): Promise<SignOfferResponse> };
}> {
  const keyring = new ReceiptKeyring(pool, settings.keks);
  const resealed = await keyring.start((msg, kid) => logger.warn({ kid }, msg));
  if (resealed.length > 0) logger.info({ kids: resealed }, 're-sealed receipt keys under the newest key-encryption key');
  if (!settings.enabled) logger.warn('RECEIPTS_ISSUE=false: no receipts are issued (a bench-only setting)');
  return {
    issuing: settings.enabled ? { keyring, iss: settings.issuer } : undefined,
    rpcs: {
      ...receiptService(pool, await loadReceiptCursorCodec(pool)),
      // Offers are signed whether or not receipts are issued (RECEIPTS_ISSUE=false is the bench's).
      SignOffer: async (req) => {
        if (!req.owner?.tenantId || !req.owner.partnerId) throw new DomainError('validation_error', 'owner (tenant and partner) is required');
        const terms = parseOfferTerms(req.claimsJson);
        return signOffer(pool, keyring, settings.issuer, { tenantId: req.owner.tenantId, partnerId: req.owner.partnerId }, terms).catch(dbError);
      },
    },
  };
}

/** A request's received_at (the job's createdAt) as ISO 8601 UTC; now when absent (a worker predating receipts). */
export function receivedAtOf(value: string): string {
  if (value === '') return new Date().toISOString();
  const t = parseTimestamp(value);
  if (t === undefined) throw new DomainError('validation_error', 'received_at must be an RFC 3339 timestamp');
  return new Date(t).toISOString();
}
