// Query strings of the list endpoints (policies, attachments, jobs, submissions, …): each parameter at
// most once, unknown ones refused, and the paging pair `limit` (1..200) and `cursor` (a nextCursor,
// opaque) read one way; every bad parameter is reported at once in `details` (400 validation_error).
import { DomainError, type ErrorDetail } from '@partner/shared/domain/errors';
import { isCursorShaped } from '@partner/shared/domain/list-cursor';
import { CURSOR_ISSUE } from '@partner/shared/domain/list-page';
import { parseTimestamp, TIMESTAMP_ISSUE } from '@partner/shared/domain/time';

export const MAX_LIMIT = 200;
const MAX_CURSOR_LENGTH = 512;

/** The query's parameters, each given at most once; unknown or repeated ones are reported. */
export function singleParams(querystring: string, allowed: ReadonlySet<string>, details: ErrorDetail[]): Map<string, string> {
  const params = new Map<string, string>();
  const repeated = new Set<string>();
  for (const [name, value] of new URLSearchParams(querystring)) {
    if (!allowed.has(name)) details.push({ field: name, issue: 'is not a parameter of this operation' });
    else if (params.has(name)) repeated.add(name);
    else params.set(name, value);
  }
  for (const name of repeated) details.push({ field: name, issue: 'must be given at most once' });
  return params;
}

/**
 * `limit` and `cursor`. An empty cursor is the first page, so `cursor=${nextCursor ?? ''}` works;
 * anything else must look like a nextCursor (the owning service checks what it was issued for).
 */
export function pageParams(params: Map<string, string>, details: ErrorDetail[]): { pageSize?: number; pageToken?: string } {
  const page: { pageSize?: number; pageToken?: string } = {};
  const limit = params.get('limit');
  if (limit !== undefined) {
    const n = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (n >= 1 && n <= MAX_LIMIT) page.pageSize = n;
    else details.push({ field: 'limit', issue: `must be an integer from 1 to ${MAX_LIMIT}` });
  }
  const cursor = params.get('cursor');
  if (cursor) {
    if (cursor.length <= MAX_CURSOR_LENGTH && /^[A-Za-z0-9_-]+$/.test(cursor)) page.pageToken = cursor;
    else details.push({ field: 'cursor', issue: 'is not a cursor of this listing: pass nextCursor unchanged, with the same filters' });
  }
  return page;
}

/**
 * A timestamp parameter (updatedSince, since, …): every route reads them with this one parser
 * (shared/domain/time.ts: RFC 3339 with a zone, years 0001–9999 once the offset is applied). Returns the
 * instant as UTC ISO 8601 with milliseconds, or reports the parameter and returns undefined.
 */
export function timestampParam(params: Map<string, string>, name: string, details: ErrorDetail[]): string | undefined {
  const value = params.get(name);
  if (value === undefined) return undefined;
  const t = parseTimestamp(value);
  if (t === undefined) {
    details.push({ field: name, issue: TIMESTAMP_ISSUE });
    return undefined;
  }
  return new Date(t).toISOString();
}

export function invalidQuery(details: ErrorDetail[]): DomainError {
  return new DomainError('validation_error', 'invalid query parameters', { details });
}

/**
 * The query's parameters and page, each bad one reported at once: unknown or repeated parameters,
 * limit, a cursor that cannot be one of these lists' (the service verifies the rest), and whatever
 * check() finds in the filters.
 */
export function readListQuery(
  querystring: string,
  allowed: ReadonlySet<string>,
  check: (params: Map<string, string>, details: ErrorDetail[]) => void,
): { params: Map<string, string>; page: { pageSize?: number; pageToken?: string } } {
  const details: ErrorDetail[] = [];
  const params = singleParams(querystring, allowed, details);
  const page = pageParams(params, details);
  if (page.pageToken !== undefined && !isCursorShaped(page.pageToken)) details.push({ field: 'cursor', issue: CURSOR_ISSUE });
  check(params, details);
  if (details.length > 0) throw invalidQuery(details);
  return { params, page };
}

export function checkEnum(params: Map<string, string>, name: string, values: readonly string[], details: ErrorDetail[]): void {
  const v = params.get(name);
  if (v !== undefined && !values.includes(v)) details.push({ field: name, issue: `must be one of ${values.join(', ')}` });
}

export function checkTimestamps(params: Map<string, string>, names: readonly string[], details: ErrorDetail[]): void {
  for (const name of names) {
    const v = params.get(name);
    if (v !== undefined && parseTimestamp(v) === undefined) details.push({ field: name, issue: TIMESTAMP_ISSUE });
  }
}
