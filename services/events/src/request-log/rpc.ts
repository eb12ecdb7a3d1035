// ListRequests and GetRequest (GET /v1/requests, GET /v1/requests/{id}): a partner's request log,
// newest first, one keyset page at a time. Every query is scoped to the owner (tenant, partner); the
// cursor is signed and bound to the owner and every filter (a cursor of another filter is a 400).
// A read by id looks only in the day its id names (the id's time is its created_at).
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { prefixedIds, type CursorCodec, type CursorPosition } from '@partner/shared/domain/list-cursor';
import { Conditions, cutPage, pageSizeOf, resolvePage, timestampFilter, type Owner } from '@partner/shared/domain/list-page';
import { isRequestLogId, parseStatusFilter, REQUEST_LOG_METHODS, requestLogIdTime, STATUS_FILTER_ISSUE, type StatusFilter } from '@partner/shared/domain/request-log';
import { loadCursorCodec } from '@partner/shared/db/cursor-keys';
import { dbError, prepared, type Pool } from '@partner/shared/db/pg';
import type { ListRequestsRequest__Output } from '@partner/shared/generated/partner/events/v1/ListRequestsRequest';
import type { GetRequestRequest__Output } from '@partner/shared/generated/partner/events/v1/GetRequestRequest';
import type { RequestLogEntry } from '@partner/shared/generated/partner/events/v1/RequestLogEntry';

export const CURSOR_CONTEXT = 'partner.events.v1/request-log-cursor';
const REQUEST_IDS = prefixedIds('req');

const MAX_FILTER_LENGTH = 512;

interface Row {
  id: string;
  created_at: Date;
  request_id: string;
  method: string;
  path: string;
  query: string | null;
  status: number;
  duration_ms: number;
  client_id: string;
  principal_id: string | null;
  idempotency_key: string | null;
  idempotent_replayed: boolean;
  job_id: string | null;
  error_code: string | null;
}

interface DetailRow extends Row {
  request_headers: string;
  request_body: string | null;
  request_body_truncated: boolean;
  request_body_size_bytes: number | null;
  response_body: string | null;
  response_body_truncated: boolean;
  response_body_size_bytes: number | null;
}

const LIST_COLUMNS =
  'id, created_at, request_id, method, path, query, status, duration_ms, client_id, principal_id, idempotency_key, idempotent_replayed, job_id, error_code';
const DETAIL_COLUMNS = `${LIST_COLUMNS}, request_headers::text AS request_headers, request_body::text AS request_body, request_body_truncated, request_body_size_bytes,
  response_body::text AS response_body, response_body_truncated, response_body_size_bytes`;

const idOf = (uuid: string): string => `req_${uuid.replace(/-/g, '')}`;
const uuidOf = (id: string): string => {
  const h = id.slice(4);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

function toEntry(r: Row): RequestLogEntry {
  return {
    id: idOf(r.id),
    requestId: r.request_id,
    method: r.method,
    path: r.path,
    ...(r.query !== null ? { query: r.query } : {}),
    status: r.status,
    durationMs: r.duration_ms,
    clientId: r.client_id,
    ...(r.principal_id !== null ? { principalId: r.principal_id } : {}),
    ...(r.idempotency_key !== null ? { idempotencyKey: r.idempotency_key } : {}),
    idempotentReplayed: r.idempotent_replayed,
    ...(r.job_id !== null ? { jobId: r.job_id } : {}),
    ...(r.error_code !== null ? { errorCode: r.error_code } : {}),
    createdAt: r.created_at.toISOString(),
  };
}

function toDetail(r: DetailRow): RequestLogEntry {
  return {
    ...toEntry(r),
    requestHeadersJson: r.request_headers,
    requestBodyJson: r.request_body ?? 'null',
    requestBodyTruncated: r.request_body_truncated,
    ...(r.request_body_size_bytes !== null ? { requestBodySizeBytes: r.request_body_size_bytes } : {}),
    responseBodyJson: r.response_body ?? 'null',
    responseBodyTruncated: r.response_body_truncated,
    ...(r.response_body_size_bytes !== null ? { responseBodySizeBytes: r.response_body_size_bytes } : {}),
  };
}

function ownerOf(o: { tenantId: string; partnerId: string } | null | undefined): Owner {
  if (!o?.tenantId || !o.partnerId) throw new DomainError('validation_error', 'owner is required');
  return { tenantId: o.tenantId, partnerId: o.partnerId };
}

export interface ListRequestsArgs {
  owner: Owner;
  limit: number;
  status?: StatusFilter;
  statusText?: string;
  method?: string;
  pathPrefix?: string;
  idempotencyKey?: string;
  requestId?: string;
  jobId?: string;
  createdSince?: string;
  createdBefore?: string;
  after?: CursorPosition;
}

const filtersOf = (a: ListRequestsArgs): (string | undefined)[] => [
  a.statusText,
  a.method,
  a.pathPrefix,
  a.idempotencyKey,
  a.requestId,
  a.jobId,
  a.createdSince,
  a.createdBefore,
];

/** A free-text filter: at most MAX_FILTER_LENGTH characters (the gateway checked it is usable text). */
function textFilter(value: string, field: string, details: ErrorDetail[]): string | undefined {
  if (value === '') return undefined;
  if (value.length > MAX_FILTER_LENGTH) {
    details.push({ field, issue: `must be at most ${MAX_FILTER_LENGTH} characters` });
    return undefined;
  }
  return value;
}

/** Validates a ListRequests request (every bad filter named by its API name) and resolves its cursor. */
export function parseListRequests(req: ListRequestsRequest__Output, codec: CursorCodec): ListRequestsArgs {
  const details: ErrorDetail[] = [];
  const args: ListRequestsArgs = { owner: ownerOf(req.owner), limit: pageSizeOf(req.pageSize, details) };
  if (req.status !== '') {
    const status = parseStatusFilter(req.status);
    if (status) {
      args.status = status;
      args.statusText = req.status;
    } else details.push({ field: 'status', issue: STATUS_FILTER_ISSUE });
  }
  if (req.method !== '') {
    if ((REQUEST_LOG_METHODS as readonly string[]).includes(req.method)) args.method = req.method;
    else details.push({ field: 'method', issue: `must be one of ${REQUEST_LOG_METHODS.join(', ')}` });
  }
  if (req.pathPrefix !== '') {
    if (req.pathPrefix.startsWith('/')) args.pathPrefix = textFilter(req.pathPrefix, 'pathPrefix', details);
    else details.push({ field: 'pathPrefix', issue: 'must start with "/" (e.g. /v1/submissions)' });
  }
  args.idempotencyKey = textFilter(req.idempotencyKey, 'idempotencyKey', details);
  args.requestId = textFilter(req.requestId, 'requestId', details);
  args.jobId = textFilter(req.jobId, 'jobId', details);
  args.createdSince = timestampFilter(req.createdSince, 'createdSince', details);
  args.createdBefore = timestampFilter(req.createdBefore, 'createdBefore', details);
  const after = resolvePage(req.pageToken, args.owner, filtersOf(args), codec, details);
  if (after) args.after = { createdAtMs: after.createdAtMs, id: uuidOf(after.id) };
  return args;
}

/** The SQL of one page (limit + 1 rows), newest first. */
export function listRequestsQuery(a: ListRequestsArgs): { text: string; values: unknown[] } {
  const c = new Conditions(a.owner);
  if (a.status) {
    if (a.status.min === a.status.max) c.add((p) => `status = ${p}::smallint`, a.status.min);
    else c.add((p) => `status BETWEEN ${p}::smallint`, a.status.min).add((p) => `${p}::smallint`, a.status.max);
  }
  if (a.method) c.add((p) => `method = ${p}`, a.method);
  if (a.pathPrefix) c.add((p) => `starts_with(path, ${p})`, a.pathPrefix);
  if (a.idempotencyKey) c.add((p) => `idempotency_key = ${p}`, a.idempotencyKey);
  if (a.requestId) c.add((p) => `request_id = ${p}`, a.requestId);
  if (a.jobId) c.add((p) => `job_id = ${p}`, a.jobId);
  if (a.createdSince) c.add((p) => `created_at >= ${p}::timestamptz`, a.createdSince);
  if (a.createdBefore) c.add((p) => `created_at < ${p}::timestamptz`, a.createdBefore);
  return c.after(a.after, 'id', 'uuid').query(LIST_COLUMNS, 'request_log', 'id', a.limit);
}

export async function requestLogHandlers(pool: Pool) {
  const codec = await loadCursorCodec(pool, [], CURSOR_CONTEXT, REQUEST_IDS);
  return {
    ListRequests: async (req: ListRequestsRequest__Output) => {
      const args = parseListRequests(req, codec);
      const q = listRequestsQuery(args);
      const { rows } = await pool.query<Row>(prepared(q.text, q.values)).catch(dbError);
      const page = cutPage(rows, args.limit, (r) => idOf(r.id), args.owner, filtersOf(args), codec);
      return { entries: page.rows.map(toEntry), nextPageToken: page.nextCursor };
    },
    GetRequest: async (req: GetRequestRequest__Output) => {
      const owner = ownerOf(req.owner);
      if (!isRequestLogId(req.id)) throw notFound('request');
      const createdAt = new Date(requestLogIdTime(req.id)).toISOString();
      const { rows } = await pool
        .query<DetailRow>(
          prepared(`SELECT ${DETAIL_COLUMNS} FROM request_log WHERE tenant_id = $1 AND partner_id = $2 AND created_at = $3::timestamptz AND id = $4::uuid`, [
            owner.tenantId,
            owner.partnerId,
            createdAt,
            uuidOf(req.id),
          ]),
        )
        .catch(dbError);
      const row = rows[0];
      if (!row) throw notFound('request');
      return { entry: toDetail(row) };
    },
  };
}
