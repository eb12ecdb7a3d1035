// The service side of a keyset-paginated list (jobs, submissions): the page size, timestamp filters
// and cursor of a List request checked one way (every bad field named by its API name), the WHERE
// clause built with numbered parameters, and a page cut from limit + 1 rows with its next cursor.
import { DomainError, type ErrorDetail } from './errors.js';
import { bindingOf, type CursorCodec, type CursorPosition } from './list-cursor.js';
import { parseTimestamp, TIMESTAMP_ISSUE } from './time.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
export const CURSOR_ISSUE = 'is not a cursor of this listing: pass nextCursor unchanged, with the same filters';
export { TIMESTAMP_ISSUE };

export interface Owner {
  tenantId: string;
  partnerId: string;
}

/** The page size of a request (0 = the default), or a detail naming `limit`. */
export function pageSizeOf(pageSize: number, details: ErrorDetail[]): number {
  if (pageSize === 0) return DEFAULT_LIMIT;
  if (Number.isInteger(pageSize) && pageSize >= 1 && pageSize <= MAX_LIMIT) return pageSize;
  details.push({ field: 'limit', issue: `must be an integer from 1 to ${MAX_LIMIT}` });
  return DEFAULT_LIMIT;
}

/** A timestamp filter ('' = none) normalised to ISO UTC milliseconds, or a detail naming field. */
export function timestampFilter(value: string, field: string, details: ErrorDetail[]): string | undefined {
  if (value === '') return undefined;
  const t = parseTimestamp(value);
  if (t === undefined) {
    details.push({ field, issue: TIMESTAMP_ISSUE });
    return undefined;
  }
  return new Date(t).toISOString();
}

/**
 * The position a page token resumes after. The token is bound to the owner and the filters, so it
 * is only checked once they are valid (a bad limit does not matter). Throws validation_error with
 * every detail collected so far.
 */
export function resolvePage(
  token: string,
  owner: Owner,
  filters: readonly (string | undefined)[],
  codec: CursorCodec,
  details: ErrorDetail[],
): CursorPosition | undefined {
  let after: CursorPosition | undefined;
  if (details.every((d) => d.field === 'limit') && token !== '') {
    after = codec.decode(token, bindingOf(owner, filters));
    if (!after) details.push({ field: 'cursor', issue: CURSOR_ISSUE });
  }
  if (details.length > 0) throw new DomainError('validation_error', 'invalid list parameters', { details });
  return after;
}

/** WHERE conditions with their numbered parameters, starting with the owner. */
export class Conditions {
  readonly values: unknown[];
  private readonly where: string[];

  constructor(owner: Owner) {
    this.values = [owner.tenantId, owner.partnerId];
    this.where = ['tenant_id = $1', 'partner_id = $2'];
  }

  /** sql gets the placeholder of value, e.g. (p) => `kind = ${p}`. */
  add(sql: (p: string) => string, value: unknown): this {
    this.values.push(value);
    this.where.push(sql(`$${this.values.length}`));
    return this;
  }

  raw(sql: string): this {
    this.where.push(sql);
    return this;
  }

  /** The keyset condition: strictly after `after` in (created_at, id) descending order. */
  after(after: CursorPosition | undefined, idColumn: string, idType: string): this {
    if (!after) return this;
    this.values.push(new Date(after.createdAtMs).toISOString(), after.id);
    const n = this.values.length;
    return this.raw(`(created_at, ${idColumn}) < ($${n - 1}::timestamptz, $${n}::${idType})`);
  }

  /** One page, newest first: limit + 1 rows, so the caller knows whether another page follows. */
  query(columns: string, table: string, idColumn: string, limit: number): { text: string; values: unknown[] } {
    const values = [...this.values, limit + 1];
    return {
      text: `SELECT ${columns} FROM ${table} WHERE ${this.where.join(' AND ')} ORDER BY created_at DESC, ${idColumn} DESC LIMIT $${values.length}`,
      values,
    };
  }
}

/** The page of limit + 1 rows cut to limit, with the cursor after its last row ('' when it is the last page). */
export function cutPage<R extends { created_at: Date }>(
  rows: R[],
  limit: number,
  idOf: (r: R) => string,
  owner: Owner,
  filters: readonly (string | undefined)[],
  codec: CursorCodec,
): { rows: R[]; nextCursor: string } {
  if (rows.length <= limit) return { rows, nextCursor: '' };
  const page = rows.slice(0, limit);
  const last = page[page.length - 1]!;
  return { rows: page, nextCursor: codec.encode({ createdAtMs: last.created_at.getTime(), id: idOf(last) }, bindingOf(owner, filters)) };
}
