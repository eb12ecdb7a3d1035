// The transport every PartnerClient call goes through (as temporal's `connection` is for its
// workflow and schedule clients): one request to the API with
// - its access token (cached and refreshed by tokens.ts; one fresh token after a 401 invalid_token);
// - its URL, headers and body, the body made afresh for every attempt;
// - its time limits: one per attempt (longer for transfers and held requests), and the call's own;
// - its retries: after no answer, and where the API says `retryable` (429, 503) after Retry-After,
//   with jittered exponential backoff and a bounded number of attempts.
// Every request is safe to resend: reads are, a job's cancel is (the same answer again), and mutations
// carry their Idempotency-Key (mutations.ts).
import { DeprecationNotices } from './deprecation.js';
import { PartnerApiError, PartnerNetworkError } from './errors.js';
import type { CallOptions, PartnerClientOptions, RequestEvent, ResponseEvent } from './options.js';
import { abortReason, backoffMs, parseRetryAfter, sleep, type BackoffOptions } from './timing.js';
import { TokenProvider } from './tokens.js';
import type { Page } from './types.js';

export const SDK_VERSION = '1.0.0';

/**
 * The answer behind a successful call, as `result.lastResponse` (non-enumerable, so JSON output is
 * unchanged): the X-Request-Id to quote, the job that produced a mutation's result when the SDK
 * followed it, and whether the server replayed an earlier answer for the same Idempotency-Key.
 */
export interface LastResponse {
  status: number;
  requestId: string | undefined;
  jobId: string | undefined;
  replayed: boolean;
}

export type WithResponse<T> = T & { readonly lastResponse?: LastResponse };

/** The `lastResponse` of a result the SDK returned, if it has one. */
export function lastResponseOf(result: unknown): LastResponse | undefined {
  return isRecord(result) ? (result as { lastResponse?: LastResponse }).lastResponse : undefined;
}

/** One API request, as the resources describe it. */
export interface RequestSpec extends CallOptions {
  method: string;
  path: string;
  query?: Record<string, string | number | undefined> | undefined;
  headers?: Record<string, string>;
  json?: unknown;
  /** A body made afresh for every attempt (streams cannot be sent twice); `stop` ends it early. */
  body?: (stop: AbortSignal) => { body: BodyInit; contentType: string; length?: number };
  /** Extra time the server may hold the request (Prefer: wait). */
  holdSeconds?: number;
  /** Keep the response body unread and return it as a stream. */
  stream?: boolean;
  /** A 304 Not Modified (the request sent If-None-Match) is an answer, not an error. */
  notModified?: boolean;
}

export interface ApiAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** A response whose body could not be read (the connection dropped): handled like a failed fetch. */
class BodyReadError extends Error {}

export class Transport {
  /** Attempts per request, and rounds per mutation. */
  readonly maxAttempts: number;
  readonly backoff: BackoffOptions;
  private readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly tokens: TokenProvider;
  private readonly requestTimeoutMs: number;
  private readonly transferTimeoutMs: number;
  private readonly principalId: string | undefined;
  private readonly userAgent: string;
  private readonly deprecations: DeprecationNotices;
  private readonly onRequest: ((info: RequestEvent) => void) | undefined;
  private readonly onResponse: ((info: ResponseEvent) => void) | undefined;

  constructor(opts: PartnerClientOptions) {
    for (const name of ['baseUrl', 'authUrl', 'clientId', 'clientSecret', 'scope'] as const) {
      if (typeof opts[name] !== 'string' || opts[name] === '') throw new TypeError(`PartnerClient: ${name} is required`);
    }
    // The operations' paths begin with /v1: a base URL given with it (as the docs' {base_url}/v1 reads) is the same.
    this.baseUrl = withoutTrailingSlashes(new URL(opts.baseUrl).href).replace(/\/v1$/, '');
    const authUrl = withoutTrailingSlashes(new URL(opts.authUrl).href);
    this.fetchFn = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.maxAttempts = Math.max(1, opts.maxRetries !== undefined ? opts.maxRetries + 1 : (opts.maxAttempts ?? 4));
    this.onRequest = opts.onRequest;
    this.onResponse = opts.onResponse;
    this.backoff = { baseMs: opts.backoff?.baseMs ?? 500, maxMs: opts.backoff?.maxMs ?? 20_000 };
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.transferTimeoutMs = opts.transferTimeoutMs ?? 600_000;
    this.principalId = opts.principalId;
    this.deprecations = new DeprecationNotices(opts.onDeprecation);
    const node = typeof process === 'object' && process.version ? ` node/${process.version}` : '';
    this.userAgent = `partner-sdk/${SDK_VERSION}${node}${opts.userAgent ? ` ${opts.userAgent}` : ''}`;
    this.tokens = new TokenProvider({
      tokenUrl: authUrl.endsWith('/oauth2/token') ? authUrl : `${authUrl}/oauth2/token`,
      clientId: opts.clientId,
      clientSecret: opts.clientSecret,
      scope: opts.scope,
      fetch: this.fetchFn,
      refreshMarginSeconds: opts.tokenRefreshMarginSeconds ?? 60,
      maxAttempts: this.maxAttempts,
      backoff: this.backoff,
      timeoutMs: this.requestTimeoutMs,
      userAgent: this.userAgent,
    });
  }

  /** The access token requests carry (cached until the refresh margin). */
  accessToken(signal?: AbortSignal): Promise<string> {
    return this.tokens.get(signal);
  }

  /** One request, with its retries: the answer of a 2xx, or the API's error as a PartnerApiError. */
  async request<T>(spec: RequestSpec): Promise<ApiAnswer<T>> {
    const url = new URL(`${this.baseUrl}${spec.path}`);
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const maxAttempts = spec.maxRetries !== undefined ? Math.max(0, spec.maxRetries) + 1 : this.maxAttempts;
    const limit = new CallLimit(spec.signal, spec.timeoutMs, `${spec.method} ${url.pathname}`);
    let refreshedToken = false;
    let lastNetworkError: unknown;

    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      limit.check();
      const token = await this.tokens.get(limit.signal).catch((err: unknown) => {
        throw limit.tokenError(err);
      });
      const { init, headers, stopSending } = this.attemptInit(spec, token, limit.signal);
      if (this.onRequest) {
        const { authorization: _omitted, ...shown } = headers;
        this.onRequest({ method: spec.method, url: url.href, attempt, headers: shown });
      }
      const started = Date.now();

      let res: Response;
      let body: unknown;
      try {
        res = await this.fetchFn(url, init);
        this.onResponse?.({ method: spec.method, url: url.href, attempt, status: res.status, requestId: res.headers.get('x-request-id') ?? undefined, durationMs: Date.now() - started });
        if (res.ok && spec.stream) this.deprecations.notice(spec.method, url.pathname, res.headers);
        if (res.ok && spec.stream) return { status: res.status, headers: res.headers, body: res.body as T };
        const text = await res.text().catch((err: unknown) => {
          throw new BodyReadError('the response body could not be read', { cause: err });
        });
        body = text === '' ? undefined : parseJson(text);
        if (!res.ok && init.duplex) stopSending.abort();
      } catch (err) {
        limit.check();
        // No answer (refused, reset, dropped mid-body, timed out): send the same request again. Every
        // request is safe to resend: reads are, and mutations carry their Idempotency-Key.
        lastNetworkError = err;
        if (attempt < maxAttempts) await limit.pause(backoffMs(attempt, this.backoff));
        continue;
      }

      this.deprecations.notice(spec.method, url.pathname, res.headers);
      if (spec.notModified && res.status === 304) return { status: 304, headers: res.headers, body: undefined as T };
      if (res.ok) {
        const info: LastResponse = {
          status: res.status,
          requestId: res.headers.get('x-request-id') ?? undefined,
          // The job behind a mutation's answer (a 200 settled within the wait has no other trace of it).
          jobId: res.headers.get('job-id') ?? undefined,
          replayed: res.headers.get('idempotent-replayed') === 'true',
        };
        return { status: res.status, headers: res.headers, body: attachResponse(body, info) as T };
      }
      const error = apiError(res, body);
      if (res.status === 401 && error.code === 'invalid_token' && !refreshedToken) {
        // The token was refused (revoked key, clock skew): one fresh token, then the request again.
        this.tokens.invalidate(token);
        refreshedToken = true;
        attempt--;
        continue;
      }
      // A failed job is not retried here: the same key would replay it (see mutations.ts).
      if (!error.retryable || error.jobId !== undefined || attempt >= maxAttempts) throw error;
      await limit.pause(Math.max((error.retryAfterSeconds ?? 0) * 1000, backoffMs(attempt, this.backoff)));
    }
    throw new PartnerNetworkError(`${spec.method} ${url.pathname} failed after ${maxAttempts} attempts: ${describe(lastNetworkError)}`, {
      cause: lastNetworkError,
    });
  }

  /** One attempt's fetch init: the headers with the token, the body made afresh, and the attempt's time limit. */
  private attemptInit(spec: RequestSpec, token: string, signal: AbortSignal | undefined) {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.userAgent,
      ...spec.headers,
      authorization: `Bearer ${token}`,
    };
    const principalId = spec.principalId ?? this.principalId;
    if (principalId !== undefined) headers['x-principal-id'] = principalId;
    const init: RequestInit & { duplex?: 'half' } = { method: spec.method, headers };
    // Ends an upload the server refused before reading all of it (413, 415, 404): without this
    // the connection would stay open, still offering the rest of the body.
    const stopSending = new AbortController();
    if (spec.json !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(spec.json);
    } else if (spec.body) {
      const b = spec.body(stopSending.signal);
      headers['content-type'] = b.contentType;
      if (b.length !== undefined) headers['content-length'] = String(b.length);
      init.body = b.body;
      if (b.body instanceof ReadableStream) init.duplex = 'half';
    }
    const budget = spec.stream || spec.body ? this.transferTimeoutMs : this.requestTimeoutMs;
    const timeout = AbortSignal.timeout(budget + (spec.holdSeconds ?? 0) * 1000);
    init.signal = AbortSignal.any([...(signal ? [signal] : []), timeout]);
    return { init, headers, stopSending };
  }
}

/**
 * A call's limits across its attempts: the caller's signal, and the call's own time (timeoutMs).
 * Running out of time is not an abort: it throws a PartnerNetworkError naming the call.
 */
class CallLimit {
  /** Aborts when either does. */
  readonly signal: AbortSignal | undefined;
  private readonly timeout: AbortSignal | undefined;

  constructor(
    private readonly caller: AbortSignal | undefined,
    private readonly timeoutMs: number | undefined,
    private readonly call: string,
  ) {
    this.timeout = timeoutMs !== undefined ? AbortSignal.timeout(timeoutMs) : undefined;
    this.signal = this.timeout ? AbortSignal.any([...(caller ? [caller] : []), this.timeout]) : caller;
  }

  /** Throws the caller's abort reason, or the timeout, once either has happened. */
  check(): void {
    if (this.caller?.aborted) throw abortReason(this.caller);
    if (this.timeout?.aborted) throw this.timedOut();
  }

  /** What to throw when the token could not be had: the timeout when it cut the wait short. */
  tokenError(err: unknown): unknown {
    return this.timeout?.aborted && !this.caller?.aborted ? this.timedOut() : err;
  }

  /** Sleeps between attempts; the caller's abort rethrows its reason, the call's time limit a timeout. */
  async pause(ms: number): Promise<void> {
    try {
      await sleep(ms, this.signal);
    } catch (err) {
      this.check();
      throw err;
    }
  }

  private timedOut(): PartnerNetworkError {
    return new PartnerNetworkError(`${this.call} did not complete within ${this.timeoutMs} ms`);
  }
}

/** Every item of a list, page after page: `page` is asked for each page with the filters and its cursor. */
export async function* paginate<P extends object, T>(params: P, page: (params: P & { cursor?: string }) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const p = await page({ ...params, ...(cursor ? { cursor } : {}) });
    yield* p.items;
    cursor = p.nextCursor ?? undefined;
  } while (cursor);
}

/** A path segment. */
export const seg = (s: string): string => encodeURIComponent(s);

/** The call options a nested request passes on. */
export function passOn(opts: CallOptions): CallOptions {
  return {
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.principalId !== undefined ? { principalId: opts.principalId } : {}),
    ...(opts.maxRetries !== undefined ? { maxRetries: opts.maxRetries } : {}),
  };
}

/** Attaches `lastResponse` to an object result, non-enumerable (JSON output stays the API's). */
export function attachResponse<T>(body: T, info: LastResponse): T {
  if (isRecord(body) && Object.isExtensible(body)) {
    Object.defineProperty(body, 'lastResponse', { value: info, enumerable: false, configurable: true, writable: false });
  }
  return body;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The API's error envelope as a PartnerApiError; anything else (a proxy's page) by its status. */
function apiError(res: Response, body: unknown): PartnerApiError {
  const requestId = res.headers.get('x-request-id') ?? undefined;
  const retryAfterSeconds = parseRetryAfter(res.headers.get('retry-after'));
  const e = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  if (e && typeof e.code === 'string') {
    return PartnerApiError.of({
      status: res.status,
      code: e.code,
      message: typeof e.message === 'string' ? e.message : e.code,
      retryable: e.retryable === true,
      requestId,
      details: Array.isArray(e.details) ? (e.details as PartnerApiError['details']) : undefined,
      jobId: isRecord(body) && typeof body.jobId === 'string' ? body.jobId : undefined,
      retryAfterSeconds,
    });
  }
  return PartnerApiError.of({
    status: res.status,
    code: `http_${res.status}`,
    message: `HTTP ${res.status} ${res.statusText}`.trim(),
    retryable: res.status >= 500 || res.status === 408 || res.status === 429,
    requestId,
    retryAfterSeconds,
  });
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return `${err.message}${cause}`;
  }
  return String(err);
}

/** A URL without its trailing slashes (a loop: /\/+$/ is quadratic on a long run of slashes). */
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end--;
  return url.slice(0, end);
}
