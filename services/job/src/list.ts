// ListJobs: a partner's jobs, newest first, one keyset page at a time (GET /v1/jobs). Every query
// is scoped to the owner (tenant, partner); the cursor is bound to the owner and the filters.
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';
import { JOB_KINDS, JOB_STATUS_FILTER } from '@partner/shared/domain/jobs';
import { JOB_IDS, type CursorCodec, type CursorPosition } from '@partner/shared/domain/list-cursor';
import { loadCursorCodec } from '@partner/shared/db/cursor-keys';
import { Conditions, cutPage, pageSizeOf, resolvePage, timestampFilter, type Owner } from '@partner/shared/domain/list-page';
import { prepared, type Pool } from '@partner/shared/db/pg';
import type { ListJobsRequest__Output } from '@partner/shared/generated/partner/job/v1/ListJobsRequest';
import { LIST_COLUMNS, type JobRow } from './repo.js';

/** Names the job list in its cursors (a cursor of another list never passes). */
export const CURSOR_CONTEXT = 'partner.job.v1/list-cursor';

export const loadJobCursorCodec = (pool: Pool): Promise<CursorCodec> => loadCursorCodec(pool, [], CURSOR_CONTEXT, JOB_IDS);

type StatusFilter = (typeof JOB_STATUS_FILTER.names)[number];
const KINDS = new Set<string>(Object.values(JOB_KINDS));

export interface ListJobsArgs {
  owner: Owner;
  limit: number;
  status?: StatusFilter;
  kind?: string;
  /** ISO UTC milliseconds. */
  createdSince?: string;
  createdBefore?: string;
  after?: CursorPosition;
}

const filtersOf = (a: ListJobsArgs): (string | undefined)[] => [a.status, a.kind, a.createdSince, a.createdBefore];

/** Validates a ListJobs request (every bad field reported by its API name) and resolves its cursor. */
export function parseListJobs(req: ListJobsRequest__Output, codec: CursorCodec): ListJobsArgs {
  if (!req.tenantId || !req.partnerId) throw new DomainError('validation_error', 'tenant_id and partner_id are required');
  const details: ErrorDetail[] = [];
  const args: ListJobsArgs = { owner: { tenantId: req.tenantId, partnerId: req.partnerId }, limit: pageSizeOf(req.pageSize, details) };
  if (req.status !== 'JOB_STATUS_FILTER_UNSPECIFIED') {
    const status = JOB_STATUS_FILTER.fromProto(req.status);
    if (status) args.status = status;
    else details.push({ field: 'status', issue: `must be one of ${JOB_STATUS_FILTER.names.join(', ')}` });
  }
  if (req.kind !== '') {
    if (KINDS.has(req.kind)) args.kind = req.kind;
    else details.push({ field: 'kind', issue: `must be one of ${[...KINDS].join(', ')}` });
  }
  args.createdSince = timestampFilter(req.createdSince, 'createdSince', details);
  args.createdBefore = timestampFilter(req.createdBefore, 'createdBefore', details);
  args.after = resolvePage(req.pageToken, args.owner, filtersOf(args), codec, details);
  return args;
}

const STATUS_SQL: Record<StatusFilter, string> = {
  // Not settled; matches the predicate of jobs_owner_unsettled_created_idx (see migration 0005).
  processing: "status NOT IN ('succeeded', 'failed', 'canceled')",
  succeeded: "status = 'succeeded'",
  failed: "status = 'failed'",
  canceled: "status = 'canceled'",
};

/** The SQL of one page (limit + 1 rows). */
export function listJobsQuery(a: ListJobsArgs): { text: string; values: unknown[] } {
  const c = new Conditions(a.owner);
  if (a.status) c.raw(STATUS_SQL[a.status]);
  if (a.kind) c.add((p) => `kind = ${p}`, a.kind);
  if (a.createdSince) c.add((p) => `created_at >= ${p}::timestamptz`, a.createdSince);
  if (a.createdBefore) c.add((p) => `created_at < ${p}::timestamptz`, a.createdBefore);
  return c.after(a.after, 'job_id', 'text').query(LIST_COLUMNS, 'jobs', 'job_id', a.limit);
}

export async function listJobs(pool: Pool, a: ListJobsArgs, codec: CursorCodec): Promise<{ rows: JobRow[]; nextCursor: string }> {
  const q = listJobsQuery(a);
  const { rows } = await pool.query<JobRow>(prepared(q.text, q.values));
  return cutPage(rows, a.limit, (r) => r.job_id, a.owner, filtersOf(a), codec);
}
