// Partners' policies: reading one, listing them a keyset page at a time, and the mapping to the
// gRPC message. Every query is scoped to the owner (tenant, partner): another partner's policy is
// indistinguishable from a missing one.
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';
import { iso } from '@partner/shared/domain/ids';
import { prepared, type Pool } from '@partner/shared/db/pg';
import type { Policy } from '@partner/shared/generated/partner/policy/v1/Policy';
import type { ListPoliciesRequest__Output } from '@partner/shared/generated/partner/policy/v1/ListPoliciesRequest';
import { bindingOf, type CursorCodec, type CursorPosition } from '@partner/shared/domain/list-cursor';
import { POLICY_STATUS, type PolicyStatusName } from '@partner/shared/domain/policies';
import { isUuid, parseTimestamp, policyNumberIssue } from './values.js';

export interface Owner {
  tenantId: string;
  partnerId: string;
}

export interface PolicyRow {
  policy_id: string;
  policy_number: string;
  status: PolicyStatusName;
  product_id: string;
  insured_legal_name: string;
  effective_date: string;
  expiration_date: string;
  premium_amount: string;
  premium_currency: string;
  submission_id: string | null;
  quote_id: string | null;
  option_limit: string | null;
  option_retention: string | null;
  test_clock_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export const COLUMNS = `policy_id, policy_number, status, product_id, insured_legal_name, effective_date, expiration_date,
  premium_amount, premium_currency, submission_id, quote_id, option_limit, option_retention, test_clock_id, created_at, updated_at`;

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export interface ListArgs {
  limit: number;
  status?: PolicyStatusName;
  productId?: string;
  policyNumber?: string;
  /** Normalised RFC 3339 (UTC, milliseconds). */
  updatedSince?: string;
  /** Start after this position (exclusive). */
  after?: CursorPosition;
}


export function ownerOf(owner: { tenantId: string; partnerId: string } | null): Owner {
  if (!owner?.tenantId || !owner.partnerId) throw new DomainError('validation_error', 'owner (tenant and partner) is required');
  return { tenantId: owner.tenantId, partnerId: owner.partnerId };
}

/** Filters as bound into a cursor: a cursor is only valid with the very filters it was issued for. */
function filtersOf(a: Omit<ListArgs, 'limit' | 'after'>): (string | undefined)[] {
  return [a.status, a.productId, a.policyNumber, a.updatedSince];
}

/**
 * Validates a ListPolicies request (every bad field reported, by its API name) and resolves its
 * cursor. The gateway validates the same rules first; this is the service's own guard.
 */
export function parseListRequest(req: ListPoliciesRequest__Output, owner: Owner, codec: CursorCodec): ListArgs {
  const details: ErrorDetail[] = [];
  const args: ListArgs = { limit: DEFAULT_LIMIT };
  if (req.pageSize !== 0) {
    if (Number.isInteger(req.pageSize) && req.pageSize >= 1 && req.pageSize <= MAX_LIMIT) args.limit = req.pageSize;
    else details.push({ field: 'limit', issue: `must be an integer from 1 to ${MAX_LIMIT}` });
  }
  if (req.status !== 'POLICY_STATUS_UNSPECIFIED') {
    const status = POLICY_STATUS.fromProto(req.status);
    if (status) args.status = status;
    else details.push({ field: 'status', issue: 'is not a known status' });
  }
  if (req.productId !== '') {
    if (isUuid(req.productId)) args.productId = req.productId.toLowerCase();
    else details.push({ field: 'productId', issue: 'must be a UUID' });
  }
  if (req.policyNumber !== '') {
    const issue = policyNumberIssue(req.policyNumber);
    if (issue) details.push({ field: 'policyNumber', issue });
    else args.policyNumber = req.policyNumber;
  }
  if (req.updatedSince !== '') {
    const t = parseTimestamp(req.updatedSince);
    if (t === undefined) details.push({ field: 'updatedSince', issue: 'must be an RFC 3339 timestamp such as 2025-01-31T00:00:00Z' });
    else args.updatedSince = new Date(t).toISOString();
  }
  // The cursor is bound to the filters, so it can only be checked once they are valid (limit is free).
  if (details.every((d) => d.field === 'limit') && req.pageToken !== '') {
    const after = codec.decode(req.pageToken, bindingOf(owner, filtersOf(args)));
    if (after) args.after = after;
    else details.push({ field: 'cursor', issue: 'is not a cursor of this listing: pass nextCursor unchanged, with the same filters' });
  }
  if (details.length > 0) throw new DomainError('validation_error', 'invalid list parameters', { details });
  return args;
}

/** The SQL of one page (limit + 1 rows, to know whether another page follows). */
export function listQuery(owner: Owner, args: ListArgs): { text: string; values: unknown[] } {
  const values: unknown[] = [owner.tenantId, owner.partnerId];
  const where = ['tenant_id = $1', 'partner_id = $2'];
  const add = (sql: (p: string) => string, value: unknown) => {
    values.push(value);
    where.push(sql(`$${values.length}`));
  };
  if (args.status) add((p) => `status = ${p}`, args.status);
  if (args.productId) add((p) => `product_id = ${p}::uuid`, args.productId);
  if (args.policyNumber) add((p) => `policy_number = ${p}`, args.policyNumber);
  if (args.updatedSince) add((p) => `updated_at >= ${p}::timestamptz`, args.updatedSince);
  if (args.after) {
    values.push(new Date(args.after.createdAtMs).toISOString(), args.after.id);
    where.push(`(created_at, policy_id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
  }
  values.push(args.limit + 1);
  return {
    text: `SELECT ${COLUMNS} FROM policies WHERE ${where.join(' AND ')} ORDER BY created_at DESC, policy_id DESC LIMIT $${values.length}`,
    values,
  };
}

export async function listPolicies(
  pool: Pool,
  owner: Owner,
  args: ListArgs,
  codec: CursorCodec,
): Promise<{ rows: PolicyRow[]; nextCursor: string }> {
  const q = listQuery(owner, args);
  const { rows } = await pool.query<PolicyRow>(prepared(q.text, q.values));
  if (rows.length <= args.limit) return { rows, nextCursor: '' };
  const page = rows.slice(0, args.limit);
  const last = page[page.length - 1]!;
  const nextCursor = codec.encode({ createdAtMs: last.created_at.getTime(), id: last.policy_id }, bindingOf(owner, filtersOf(args)));
  return { rows: page, nextCursor };
}

export async function getPolicy(pool: Pool, owner: Owner, policyId: string): Promise<PolicyRow | undefined> {
  if (!isUuid(policyId)) return undefined;
  const r = await pool.query<PolicyRow>(
    prepared(`SELECT ${COLUMNS} FROM policies WHERE policy_id = $1 AND tenant_id = $2 AND partner_id = $3`, [
      policyId.toLowerCase(),
      owner.tenantId,
      owner.partnerId,
    ]),
  );
  return r.rows[0];
}

export function toProto(row: PolicyRow): Policy {
  return {
    policyId: row.policy_id,
    policyNumber: row.policy_number,
    status: POLICY_STATUS.toProto(row.status),
    productId: row.product_id,
    insured: { legalName: row.insured_legal_name },
    effectiveDate: row.effective_date,
    expirationDate: row.expiration_date,
    premium: { amount: row.premium_amount, currency: row.premium_currency },
    submissionId: row.submission_id ?? '',
    quoteId: row.quote_id ?? '',
    ...(row.option_limit !== null && row.option_retention !== null ? { option: { limit: row.option_limit, retention: row.option_retention } } : {}),
    testClockId: row.test_clock_id ?? '',
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
