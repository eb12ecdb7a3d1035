// What a PartnerClient and each of its calls can be given, and what its logging hooks see.
import type { DeprecationNotice } from './deprecation.js';
import type { UploadProgress } from './multipart.js';
import type { BackoffOptions } from './timing.js';
import type { DocumentType, JobHandle, JobProcessing } from './wire-types.js';

export interface PartnerClientOptions {
  /** {base_url}, e.g. https://api.uat.example.com */
  baseUrl: string;
  /** {auth_url}, the token server (the token endpoint is {auth_url}/oauth2/token). */
  authUrl: string;
  clientId: string;
  clientSecret: string;
  /** The environment's access scope, `<api_host>/access`. */
  scope: string;
  /** A fetch to use instead of the global one (proxies, instrumentation, tests). */
  fetch?: typeof fetch;
  /** Refresh tokens this many seconds before they expire (default 60). */
  tokenRefreshMarginSeconds?: number;
  /** Attempts per request, the first included (default 4). */
  maxAttempts?: number;
  /** Retries per request after the first attempt (default 3); overrides maxAttempts. */
  maxRetries?: number;
  /** Called before every HTTP attempt (for logging; the Authorization header is never included). */
  onRequest?: (info: RequestEvent) => void;
  /** Called with every HTTP answer, error answers included. */
  onResponse?: (info: ResponseEvent) => void;
  /** Backoff between attempts (default 500 ms doubling up to 20 s, jittered). */
  backoff?: Partial<BackoffOptions>;
  /** Prefer: wait=N sent with mutations (default 15; 0 answers at once with the job handle). */
  wait?: number;
  /** Prefer: wait=N sent when polling a job (default 0: plain polling every Retry-After). */
  pollWaitSeconds?: number;
  /** Time allowed for one attempt, besides any Prefer: wait (default 30 s). */
  requestTimeoutMs?: number;
  /** Time allowed for one attempt of an upload or download, bytes included (default 10 min). */
  transferTimeoutMs?: number;
  /** x-principal-id sent with every request (a principal registered for your partner). */
  principalId?: string;
  /** Appended to the User-Agent. */
  userAgent?: string;
  /**
   * Called once per operation the API marks deprecated (Deprecation/Sunset/Link headers). Default: a
   * warning on stderr (console.warn). Pass `() => {}` to silence it.
   */
  onDeprecation?: (notice: DeprecationNotice) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** x-principal-id for this call (overrides the client's). */
  principalId?: string;
  /**
   * Time allowed for the whole call, retries included. A read that runs out throws a
   * PartnerNetworkError; a mutation or wait throws a PartnerTimeoutError carrying the jobId.
   */
  timeoutMs?: number;
  /** Retries for this call (overrides the client's maxRetries). */
  maxRetries?: number;
}

/** What onRequest sees of one HTTP attempt. */
export interface RequestEvent {
  method: string;
  url: string;
  attempt: number;
  /** The request's headers, Authorization left out. */
  headers: Record<string, string>;
}

/** What onResponse sees of one HTTP answer. */
export interface ResponseEvent {
  method: string;
  url: string;
  attempt: number;
  status: number;
  requestId: string | undefined;
  durationMs: number;
}

export interface WaitOptions extends CallOptions {
  /** Give up (PartnerTimeoutError, with the jobId) when the job has not settled after this long. Default: no limit. */
  timeoutMs?: number;
  /** Prefer: wait=N on each poll (default: the client's pollWaitSeconds). */
  pollWaitSeconds?: number;
  /** Called with each `processing` answer. */
  onPoll?: (job: JobProcessing) => void;
}

export interface MutationOptions extends WaitOptions {
  /** Your own Idempotency-Key (default: a fresh UUID per call). With your own key a failed job is not retried. */
  idempotencyKey?: string;
  /** Prefer: wait=N for this call (default: the client's wait). */
  wait?: number;
  /** Called when the mutation was accepted as a job that has not settled yet (before polling). */
  onAccepted?: (handle: JobHandle) => void;
}

export interface UploadOptions extends MutationOptions {
  /** Name the file is stored under (default: the File's name, else "attachment"). */
  fileName?: string;
  /** Media type of the file (default: the Blob's type, else application/octet-stream, typed by extension). */
  contentType?: string;
  documentType?: DocumentType;
  /** Called as file bytes are handed to the connection. */
  onProgress?: (p: UploadProgress) => void;
}
