// The types every resource shares: the error envelope, a page and its parameters, and who the
// credentials belong to. Like every wire type of the SDK they are generated from the OpenAPI document
// (wire-types.ts); each resource's own types are in its file (submissions.ts, jobs.ts, …).
import type { ListAttachmentsQuery } from './wire-types.js';

export type { ErrorDetail, ErrorObject, Health } from './wire-types.js';

/** A page of a list (the document's `…Page` schemas, one type for all of them). */
export interface Page<T> {
  items: T[];
  /** Pass as `cursor` (with the same filters) for the next page; null on the last page. */
  nextCursor: string | null;
}

/** The query every list takes: `limit` (1..200, default 50) and the previous page's `cursor`. */
export type PageParams = Pick<ListAttachmentsQuery, 'limit' | 'cursor'>;
