// The receipt RPCs: ListReceipts (a partner's chain in seq order, or one submission's receipts) and
// GetReceiptKeys (the JWKS of every receipt key ever used).
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { isUuid } from '@partner/shared/domain/ids';
import { UUID_IDS, type CursorCodec } from '@partner/shared/domain/list-cursor';
import { loadCursorCodec } from '@partner/shared/db/cursor-keys';
import { cutPage, pageSizeOf, resolvePage, type Owner } from '@partner/shared/domain/list-page';
import { dbError, prepared, type Pool } from '@partner/shared/db/pg';
import type { ListReceiptsRequest__Output } from '@partner/shared/generated/partner/submission/v1/ListReceiptsRequest';
import type { ListReceiptsResponse } from '@partner/shared/generated/partner/submission/v1/ListReceiptsResponse';
import type { GetReceiptKeysResponse } from '@partner/shared/generated/partner/submission/v1/GetReceiptKeysResponse';
import { getSubmission } from '../repo.js';
import { receiptJwks } from './keys.js';

/** Names the receipt list in its cursors (a cursor of another list never passes). */
export const RECEIPT_CURSOR_CONTEXT = 'partner.submission.v1/receipt-cursor';
// A receipt cursor carries the last seq in the position's number and no id.
const NO_ID = '00000000-0000-0000-0000-000000000000';

export const loadReceiptCursorCodec = (pool: Pool): Promise<CursorCodec> => loadCursorCodec(pool, [], RECEIPT_CURSOR_CONTEXT, UUID_IDS);

interface ReceiptRow {
  seq: string;
  kind: string;
  submission_id: string;
  jws: string;
  issued_at: Date;
}

export function receiptService(pool: Pool, codec: CursorCodec) {
  const ListReceipts = async (req: ListReceiptsRequest__Output): Promise<ListReceiptsResponse> => {
    if (!req.owner?.tenantId || !req.owner.partnerId) throw new DomainError('validation_error', 'owner (tenant and partner) is required');
    const owner: Owner = { tenantId: req.owner.tenantId, partnerId: req.owner.partnerId };
    const details: ErrorDetail[] = [];
    const limit = pageSizeOf(req.pageSize, details);
    const afterSeq = Number(req.afterSeq);
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) details.push({ field: 'afterSeq', issue: 'must be an integer of at least 0' });
    let submissionId: string | undefined;
    if (req.submissionId !== '') {
      if (!isUuid(req.submissionId)) throw notFound('submission');
      submissionId = req.submissionId.toLowerCase();
    }
    const filters = [submissionId, String(afterSeq)];
    const after = resolvePage(req.pageToken, owner, filters, codec, details);
    if (submissionId && !(await getSubmission(pool, owner.tenantId, owner.partnerId, submissionId).catch(dbError))) throw notFound('submission');
    const values: unknown[] = [owner.tenantId, owner.partnerId, Math.max(afterSeq, after?.createdAtMs ?? 0), limit + 1];
    if (submissionId) values.push(submissionId);
    const { rows } = await pool
      .query<ReceiptRow>(
        prepared(
          `SELECT seq, kind, submission_id, jws, issued_at
             FROM receipts
            WHERE tenant_id = $1 AND partner_id = $2 AND seq > $3 ${submissionId ? 'AND submission_id = $5' : ''}
            ORDER BY seq LIMIT $4`,
          values,
        ),
      )
      .catch(dbError);
    // cutPage's keyset position is a number and an id: here the seq (as created_at's milliseconds) and none.
    const positioned = rows.map((r) => ({ ...r, created_at: new Date(Number(r.seq)) }));
    const page = cutPage(positioned, limit, () => NO_ID, owner, filters, codec);
    return {
      receipts: page.rows.map((r) => ({ seq: r.seq, kind: r.kind, submissionId: r.submission_id, jws: r.jws, issuedAt: r.issued_at.toISOString() })),
      nextPageToken: page.nextCursor,
    };
  };

  const GetReceiptKeys = async (): Promise<GetReceiptKeysResponse> => ({ jwksJson: JSON.stringify(await receiptJwks(pool).catch(dbError)) });

  return { ListReceipts, GetReceiptKeys };
}
