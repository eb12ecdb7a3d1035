// ListSubmissions: a partner's submissions, newest first, one keyset page at a time
// (GET /v1/submissions). Every query is scoped to the owner; the cursor is bound to the owner and
// the filters.
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';
import { isPrincipalId } from '@partner/shared/domain/ids';
import { UUID_IDS, type CursorCodec, type CursorPosition } from '@partner/shared/domain/list-cursor';
import { loadCursorCodec } from '@partner/shared/db/cursor-keys';
import { Conditions, cutPage, pageSizeOf, resolvePage, timestampFilter, type Owner } from '@partner/shared/domain/list-page';
import { prepared, type Pool } from '@partner/shared/db/pg';
import type { ListSubmissionsRequest__Output } from '@partner/shared/generated/partner/submission/v1/ListSubmissionsRequest';
import { SUBMISSION_COLUMNS, type SubmissionRow } from './submission-row.js';
import { CLEARANCE_STATUSES, isClearanceStatus, SUBMISSION_STATUS_NAMES } from '@partner/shared/domain/clearance';

/** Names the submission list in its cursors (a cursor of another list never passes). */
export const CURSOR_CONTEXT = 'partner.submission.v1/list-cursor';

export const loadSubmissionCursorCodec = (pool: Pool): Promise<CursorCodec> => loadCursorCodec(pool, [], CURSOR_CONTEXT, UUID_IDS);

/** The submission statuses there are (docs/api.md, "Resources" and "Clearance"). */
export const SUBMISSION_STATUSES = SUBMISSION_STATUS_NAMES;
export const EXTERNAL_REF_MAX = 200;

export interface ListSubmissionsArgs {
  owner: Owner;
  limit: number;
  externalRef?: string;
  status?: string;
  /** ISO UTC milliseconds. */
  createdSince?: string;
  updatedSince?: string;
  principalId?: string;
  clearance?: string;
  after?: CursorPosition;
}

const filtersOf = (a: ListSubmissionsArgs): (string | undefined)[] => [a.externalRef, a.status, a.createdSince, a.updatedSince, a.principalId, a.clearance];

/** Validates a ListSubmissions request (every bad field reported by its API name) and resolves its cursor. */
export function parseListSubmissions(req: ListSubmissionsRequest__Output, codec: CursorCodec): ListSubmissionsArgs {
  if (!req.owner?.tenantId || !req.owner.partnerId) throw new DomainError('validation_error', 'owner (tenant and partner) is required');
  const details: ErrorDetail[] = [];
  const args: ListSubmissionsArgs = {
    owner: { tenantId: req.owner.tenantId, partnerId: req.owner.partnerId },
    limit: pageSizeOf(req.pageSize, details),
  };
  if (req.externalRef !== '') {
    if ([...req.externalRef].length <= EXTERNAL_REF_MAX) args.externalRef = req.externalRef;
    else details.push({ field: 'externalRef', issue: `must be at most ${EXTERNAL_REF_MAX} characters` });
  }
  if (req.status !== '') {
    if ((SUBMISSION_STATUSES as readonly string[]).includes(req.status)) args.status = req.status;
    else details.push({ field: 'status', issue: `must be one of ${SUBMISSION_STATUSES.join(', ')}` });
  }
  args.createdSince = timestampFilter(req.createdSince, 'createdSince', details);
  args.updatedSince = timestampFilter(req.updatedSince, 'updatedSince', details);
  if (req.principalId !== '') {
    if (isPrincipalId(req.principalId)) args.principalId = req.principalId;
    else details.push({ field: 'principalId', issue: 'must be 1-128 of letters, digits and . _ : @ - (starting with a letter or digit)' });
  }
  if (req.clearance !== '') {
    if (isClearanceStatus(req.clearance)) args.clearance = req.clearance;
    else details.push({ field: 'clearance', issue: `must be one of ${CLEARANCE_STATUSES.join(', ')}` });
  }
  args.after = resolvePage(req.pageToken, args.owner, filtersOf(args), codec, details);
  return args;
}

/** The SQL of one page (limit + 1 rows). */
export function listSubmissionsQuery(a: ListSubmissionsArgs): { text: string; values: unknown[] } {
  const c = new Conditions(a.owner);
  if (a.externalRef !== undefined) c.add((p) => `external_ref = ${p}`, a.externalRef);
  if (a.status) c.add((p) => `status = ${p}`, a.status);
  if (a.createdSince) c.add((p) => `created_at >= ${p}::timestamptz`, a.createdSince);
  if (a.updatedSince) c.add((p) => `updated_at >= ${p}::timestamptz`, a.updatedSince);
  if (a.principalId) c.add((p) => `principal_id = ${p}`, a.principalId);
  if (a.clearance) c.add((p) => `clearance_status = ${p}`, a.clearance);
  return c.after(a.after, 'submission_id', 'uuid').query(SUBMISSION_COLUMNS, 'submissions', 'submission_id', a.limit);
}

export async function listSubmissions(
  pool: Pool,
  a: ListSubmissionsArgs,
  codec: CursorCodec,
): Promise<{ rows: SubmissionRow[]; nextCursor: string }> {
  const q = listSubmissionsQuery(a);
  const { rows } = await pool.query<SubmissionRow>(prepared(q.text, q.values));
  return cutPage(rows, a.limit, (r) => r.submission_id, a.owner, filtersOf(a), codec);
}
