// The request log's vocabulary (docs/api.md "Request log"), shared by the gateway (which records and
// reads it) and the events service (which stores it): entry ids, the entry as it travels on the
// request-log stream, the status filter and the limits every body is held to. No IO here.
import { v7 as uuidv7 } from 'uuid';

/** Each stored body (request and response) is at most this many bytes of its redacted JSON text. */
export const REQUEST_LOG_BODY_LIMIT_BYTES = 16 * 1024;

/** The request headers an entry keeps (lower-case names); every other header is dropped. */
export const REQUEST_LOG_HEADERS = ['content-type', 'prefer', 'idempotency-key', 'x-principal-id', 'user-agent', 'x-request-id'] as const;

/** The methods the `method` filter takes. */
export const REQUEST_LOG_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

const REQUEST_LOG_ID = /^req_[0-9a-f]{32}$/;

/**
 * The random bytes of entry ids, 16 at a time from a pool that the same CSPRNG fills 4 KB at once (as
 * Node's randomUUID pools its own): uuid asks crypto.getRandomValues for 16 bytes on every id, and an
 * id took 1.7 µs so against 0.35 µs from the pool, of the 55 µs a read answered from memory costs the
 * gateway (docs/performance.md, "Issue 47, twelfth session").
 */
const RANDOM_POOL = new Uint8Array(4096);
let randomAt = RANDOM_POOL.length;
function random16(): Uint8Array {
  if (randomAt + 16 > RANDOM_POOL.length) {
    globalThis.crypto.getRandomValues(RANDOM_POOL);
    randomAt = 0;
  }
  return RANDOM_POOL.subarray(randomAt, (randomAt += 16));
}

/**
 * `req_<32 hex>`: a UUIDv7 whose 48-bit time is the entry's createdAt (epoch ms), so a read by id
 * finds the day's partition from the id alone.
 */
export const newRequestLogId = (createdAtMs: number): string => `req_${uuidv7({ msecs: createdAtMs, random: random16() }).replace(/-/g, '')}`;

export const isRequestLogId = (s: string): boolean => REQUEST_LOG_ID.test(s);

/** The createdAt (epoch ms) an entry id carries. */
export const requestLogIdTime = (id: string): number => parseInt(id.slice(4, 16), 16);

/** A multipart request's file as the log shows it: never its bytes. */
export interface LoggedFile {
  fileName: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
}

/** One entry as the gateway ships it on the request-log stream (already redacted). */
export interface RequestLogEntry {
  id: string;
  tenantId: string;
  partnerId: string;
  requestId: string;
  method: string;
  path: string;
  query: string | null;
  status: number;
  durationMs: number;
  clientId: string;
  principalId: string | null;
  idempotencyKey: string | null;
  idempotentReplayed: boolean;
  jobId: string | null;
  errorCode: string | null;
  /** ISO 8601 UTC with milliseconds: when the request was received (the id's time). */
  createdAt: string;
  requestHeaders: Record<string, string>;
  /**
   * The redacted body as JSON text, stored as it is (the writer neither parses nor re-serialises it):
   * when requestBodyTruncated, a JSON string holding the truncated text; null when not JSON or none.
   */
  requestBodyJson: string | null;
  requestBodyTruncated: boolean;
  /** Size of the body as received (bytes), null when it had none. */
  requestBodySizeBytes: number | null;
  responseBodyJson: string | null;
  responseBodyTruncated: boolean;
  responseBodySizeBytes: number | null;
  /** Epoch ms when the gateway had answered (the writer's lag is measured from it). */
  answeredAtMs: number;
}

/** The batch one stream message carries. */
export interface RequestLogBatch {
  entries: RequestLogEntry[];
}

/** The `status` filter: a class (2xx, 4xx, 5xx) or an exact code (100-599). */
export type StatusFilter = { min: number; max: number };

export const STATUS_FILTER_ISSUE = 'must be 2xx, 4xx, 5xx or an HTTP status code (100-599)';

/** The range a `status` value selects, or undefined when it is not one. */
export function parseStatusFilter(value: string): StatusFilter | undefined {
  const cls = /^([245])xx$/.exec(value);
  if (cls) {
    const base = Number(cls[1]) * 100;
    return { min: base, max: base + 99 };
  }
  if (/^[1-5][0-9]{2}$/.test(value)) return { min: Number(value), max: Number(value) };
  return undefined;
}
