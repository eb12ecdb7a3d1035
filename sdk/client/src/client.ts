// PartnerClient: typed methods for every operation of the Partner Submission API, with the
// recommended client pattern built in (docs/api.md, "Mutations" and "Authentication"):
// - tokens cached and refreshed a margin before they expire, one token request in flight at a time,
//   and one fresh token after a 401 invalid_token;
// - mutations send a fresh Idempotency-Key and Prefer: wait=15; on 202 they poll the job honouring
//   Retry-After (never faster); after a dropped connection they resend the same request with the
//   same key, so the server answers with the same job and never makes a duplicate;
// - retries only where the API says `retryable` (429 and 503 after Retry-After), with jittered
//   exponential backoff and a bounded number of attempts;
// - everything cancellable with an AbortSignal.
import { PartnerAbortError, PartnerApiError, PartnerError, PartnerNetworkError, PartnerTimeoutError } from './errors.js';
import { multipartBody, type UploadProgress } from './multipart.js';
import { abortReason, backoffMs, parseRetryAfter, sleep, type BackoffOptions } from './timing.js';
import { TokenProvider } from './tokens.js';
import type { JobListItem, JobListParams, SubmissionListParams } from './list-types.js';
import type {
  Attachment,
  AttachmentDeleted,
  DocumentType,
  Health,
  Job,
  JobHandle,
  JobProcessing,
  Page,
  PageParams,
  Policy,
  PolicyListParams,
  SettledJob,
  Submission,
  SubmissionCreate,
  SubmissionResult,
} from './types.js';

import { eventQuery, followFeed, type EventListParams, type EventPage, type FollowOptions, type PartnerEvent } from './events.js';
import type {
  WebhookDelivery,
  WebhookDeliveryListParams,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointDeleted,
  WebhookEndpointUpdate,
  WebhookPinged,
  WebhookRecovered,
  WebhookSecretRotated,
} from './webhooks.js';
export const SDK_VERSION = '1.0.0';
/** Poll interval when an answer carries no Retry-After (the API's own hint is 5 s). */
const DEFAULT_POLL_SECONDS = 5;

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

/** An operation the API answered with a `Deprecation` header (RFC 9745), with its `Sunset` (RFC 8594) and docs link. */
export interface DeprecationNotice {
  /** `METHOD /v1/path`, ids shown as `{id}`. */
  operation: string;
  /** When it was deprecated, when the header gave a date. */
  deprecatedAt: Date | undefined;
  /** When it stops answering, when announced. */
  sunset: Date | undefined;
  /** Where to read about the replacement (`Link: <…>; rel="deprecation"`). */
  link: string | undefined;
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

/** What a mutation answered without polling: the settled result, or the job handle. */
export type MutationOutcome<T> =
  | { settled: true; result: T; replayed: boolean }
  | { settled: false; job: JobHandle; replayed: boolean; retryAfterSeconds: number };

export interface AttachmentDownload {
  body: ReadableStream<Uint8Array>;
  contentType: string;
  contentLength: number | undefined;
  fileName: string | undefined;
  /** Hex sha256 of the bytes, from the ETag. */
  sha256: string | undefined;
}

interface RequestSpec extends CallOptions {
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
}

interface ApiAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** A response whose body could not be read (the connection dropped): handled like a failed fetch. */
class BodyReadError extends Error {}

export class PartnerClient {
  private readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly tokens: TokenProvider;
  private readonly maxAttempts: number;
  private readonly backoff: BackoffOptions;
  private readonly wait: number;
  private readonly pollWaitSeconds: number;
  private readonly requestTimeoutMs: number;
  private readonly transferTimeoutMs: number;
  private readonly principalId: string | undefined;
  private readonly userAgent: string;
  private readonly onDeprecation: (notice: DeprecationNotice) => void;
  private readonly onRequest: ((info: RequestEvent) => void) | undefined;
  private readonly onResponse: ((info: ResponseEvent) => void) | undefined;
  private readonly deprecationsSeen = new Set<string>();

  constructor(opts: PartnerClientOptions) {
    for (const name of ['baseUrl', 'authUrl', 'clientId', 'clientSecret', 'scope'] as const) {
      if (typeof opts[name] !== 'string' || opts[name] === '') throw new TypeError(`PartnerClient: ${name} is required`);
    }
    // The operations' paths begin with /v1: a base URL given with it (as the docs' {base_url}/v1 reads) is the same.
    this.baseUrl = new URL(opts.baseUrl).href.replace(/\/+$/, '').replace(/\/v1$/, '');
    const authUrl = new URL(opts.authUrl).href.replace(/\/+$/, '');
    this.fetchFn = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.maxAttempts = Math.max(1, opts.maxRetries !== undefined ? opts.maxRetries + 1 : (opts.maxAttempts ?? 4));
    this.onRequest = opts.onRequest;
    this.onResponse = opts.onResponse;
    this.backoff = { baseMs: opts.backoff?.baseMs ?? 500, maxMs: opts.backoff?.maxMs ?? 20_000 };
    this.wait = opts.wait ?? 15;
    this.pollWaitSeconds = opts.pollWaitSeconds ?? 0;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.transferTimeoutMs = opts.transferTimeoutMs ?? 600_000;
    this.principalId = opts.principalId;
    this.onDeprecation = opts.onDeprecation ?? ((n) => console.warn(deprecationMessage(n)));
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

  // ---- operations -------------------------------------------------------------------------

  /**
   * The access token the client uses (fetched, or cached until the refresh margin). Useful to check
   * credentials, or to call the API with another tool.
   */
  accessToken(opts: Pick<CallOptions, 'signal'> = {}): Promise<string> {
    return this.tokens.get(opts.signal);
  }

  /** GET /v1/health: who the credentials belong to. */
  async health(opts: CallOptions = {}): Promise<WithResponse<Health>> {
    return (await this.request<Health>({ method: 'GET', path: '/v1/health', ...opts })).body;
  }

  /** GET /v1/policies: one page. */
  async listPolicies(params: PolicyListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<Policy>>> {
    return (await this.request<Page<Policy>>({ method: 'GET', path: '/v1/policies', query: { ...params }, ...opts })).body;
  }

  /** Every policy matching the filters, page after page. */
  iteratePolicies(params: Omit<PolicyListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Policy> {
    return this.paginate((cursor) => this.listPolicies({ ...params, ...(cursor ? { cursor } : {}) }, opts));
  }

  /** GET /v1/jobs: one page of the partner's jobs, newest first. */
  async listJobs(params: JobListParams = {}, opts: CallOptions = {}): Promise<Page<JobListItem>> {
    return (await this.request<Page<JobListItem>>({ method: 'GET', path: '/v1/jobs', query: { ...params }, ...opts })).body;
  }

  /** Every job matching the filters, page after page. */
  iterateJobs(params: Omit<JobListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<JobListItem> {
    return this.paginate((cursor) => this.listJobs({ ...params, ...(cursor ? { cursor } : {}) }, opts));
  }

  /** GET /v1/submissions: one page of the partner's submissions, newest first. */
  async listSubmissions(params: SubmissionListParams = {}, opts: CallOptions = {}): Promise<Page<Submission>> {
    return (await this.request<Page<Submission>>({ method: 'GET', path: '/v1/submissions', query: { ...params }, ...opts })).body;
  }

  /** Every submission matching the filters, page after page (e.g. { externalRef } to find a lost one). */
  iterateSubmissions(params: Omit<SubmissionListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Submission> {
    return this.paginate((cursor) => this.listSubmissions({ ...params, ...(cursor ? { cursor } : {}) }, opts));
  }

  /** GET /v1/policies/{id}. */
  async getPolicy(policyId: string, opts: CallOptions = {}): Promise<WithResponse<Policy>> {
    return (await this.request<Policy>({ method: 'GET', path: `/v1/policies/${seg(policyId)}`, ...opts })).body;
  }

  /** POST /v1/submissions, the whole pattern: resolves with the result once the job has succeeded. */
  async createSubmission(input: SubmissionCreate, opts: MutationOptions = {}): Promise<WithResponse<SubmissionResult>> {
    return this.mutate<SubmissionResult>(() => ({ method: 'POST', path: '/v1/submissions', json: input }), opts);
  }

  /** POST /v1/submissions without polling: the result if it settled within the wait, else the job handle. */
  startSubmission(input: SubmissionCreate, opts: Omit<MutationOptions, 'timeoutMs' | 'onPoll'> = {}): Promise<MutationOutcome<SubmissionResult>> {
    return this.send<SubmissionResult>({ method: 'POST', path: '/v1/submissions', json: input }, opts.idempotencyKey ?? crypto.randomUUID(), opts);
  }

  /** GET /v1/submissions/{id}. */
  async getSubmission(submissionId: string, opts: CallOptions = {}): Promise<WithResponse<Submission>> {
    return (await this.request<Submission>({ method: 'GET', path: `/v1/submissions/${seg(submissionId)}`, ...opts })).body;
  }

  /**
   * POST /v1/submissions/{id}/attachments: uploads the file (a Blob or File, or bytes) and resolves
   * with the attachment record once the job has succeeded. A resend re-reads the Blob.
   */
  async uploadAttachment(submissionId: string, file: Blob | Uint8Array, opts: UploadOptions = {}): Promise<WithResponse<Attachment>> {
    return this.mutate<Attachment>(() => this.uploadSpec(submissionId, file, opts), opts);
  }

  /** The upload without polling: the record if it settled within the wait, else the job handle. */
  startAttachmentUpload(submissionId: string, file: Blob | Uint8Array, opts: Omit<UploadOptions, 'timeoutMs' | 'onPoll'> = {}): Promise<MutationOutcome<Attachment>> {
    return this.send<Attachment>(this.uploadSpec(submissionId, file, opts), opts.idempotencyKey ?? crypto.randomUUID(), opts);
  }

  /** GET /v1/submissions/{id}/attachments: one page. */
  async listAttachments(submissionId: string, params: PageParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<Attachment>>> {
    return (await this.request<Page<Attachment>>({ method: 'GET', path: `/v1/submissions/${seg(submissionId)}/attachments`, query: { ...params }, ...opts })).body;
  }

  /** Every attachment of a submission, page after page. */
  iterateAttachments(submissionId: string, params: Omit<PageParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Attachment> {
    return this.paginate((cursor) => this.listAttachments(submissionId, { ...params, ...(cursor ? { cursor } : {}) }, opts));
  }

  /** GET /v1/submissions/{id}/attachments/{attachmentId}. */
  async getAttachment(submissionId: string, attachmentId: string, opts: CallOptions = {}): Promise<WithResponse<Attachment>> {
    return (await this.request<Attachment>({ method: 'GET', path: `/v1/submissions/${seg(submissionId)}/attachments/${seg(attachmentId)}`, ...opts })).body;
  }

  /** GET .../content: the bytes as a stream (read it, or cancel it), with their type, size, name and sha256. */
  async downloadAttachment(submissionId: string, attachmentId: string, opts: CallOptions = {}): Promise<AttachmentDownload> {
    const res = await this.request<ReadableStream<Uint8Array>>({
      method: 'GET',
      path: `/v1/submissions/${seg(submissionId)}/attachments/${seg(attachmentId)}/content`,
      stream: true,
      ...opts,
    });
    const length = res.headers.get('content-length');
    const etag = res.headers.get('etag');
    return {
      body: res.body,
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      contentLength: length !== null && /^\d+$/.test(length) ? Number(length) : undefined,
      fileName: fileNameOf(res.headers.get('content-disposition')),
      sha256: etag ? etag.replace(/^W\//, '').replace(/"/g, '') : undefined,
    };
  }

  /** DELETE /v1/submissions/{id}/attachments/{attachmentId}, as a job; resolves once it has succeeded. */
  async deleteAttachment(submissionId: string, attachmentId: string, opts: MutationOptions = {}): Promise<WithResponse<AttachmentDeleted>> {
    return this.mutate<AttachmentDeleted>(
      () => ({ method: 'DELETE', path: `/v1/submissions/${seg(submissionId)}/attachments/${seg(attachmentId)}` }),
      opts,
    );
  }

  /** GET /v1/jobs/{id}: the settled job, or `processing`. `wait` holds the request up to that many seconds. */
  async getJob<T = unknown>(jobIdOrStatusUrl: string, opts: CallOptions & { wait?: number } = {}): Promise<Job<T>> {
    const id = jobIdOf(jobIdOrStatusUrl);
    const wait = opts.wait ?? 0;
    return (
      await this.request<Job<T>>({
        method: 'GET',
        path: `/v1/jobs/${seg(id)}`,
        ...(wait > 0 ? { headers: { prefer: `wait=${wait}` }, holdSeconds: wait } : {}),
        ...opts,
      })
    ).body;
  }

  /** GET /v1/events: one page of the event feed. `wait` holds an empty page up to that many seconds. */
  async listEvents(params: EventListParams = {}, opts: CallOptions & { wait?: number } = {}): Promise<EventPage> {
    const wait = opts.wait ?? 0;
    return (
      await this.request<EventPage>({
        method: 'GET',
        path: '/v1/events',
        query: eventQuery(params),
        ...(wait > 0 ? { headers: { prefer: `wait=${wait}` }, holdSeconds: wait } : {}),
        ...pick(opts),
      })
    ).body;
  }

  /** Follows the event feed forever with long-poll; ends when opts.signal aborts (see events.ts). */
  followEvents(params: EventListParams = {}, opts: FollowOptions = {}): AsyncGenerator<PartnerEvent> {
    return followFeed((p, o) => this.listEvents(p, o), params, opts);
  }

  /** GET /v1/events/{id}. */
  async getEvent(eventId: string, opts: CallOptions = {}): Promise<PartnerEvent> {
    return (await this.request<PartnerEvent>({ method: 'GET', path: `/v1/events/${seg(eventId)}`, ...opts })).body;
  }

  // Webhook endpoints (mutations are jobs, like every other; see webhooks.ts for verifying deliveries).

  /** POST /v1/webhook-endpoints: resolves with the endpoint once the job has succeeded. Read its secret with getWebhookSecret. */
  async createWebhookEndpoint(input: WebhookEndpointCreate, opts: MutationOptions = {}): Promise<WithResponse<WebhookEndpoint>> {
    return this.mutate<WebhookEndpoint>(() => ({ method: 'POST', path: '/v1/webhook-endpoints', json: input }), opts);
  }

  /** GET /v1/webhook-endpoints: one page, newest first. */
  async listWebhookEndpoints(params: PageParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<WebhookEndpoint>>> {
    return (await this.request<Page<WebhookEndpoint>>({ method: 'GET', path: '/v1/webhook-endpoints', query: { ...params }, ...opts })).body;
  }

  /** Every webhook endpoint, page after page. */
  iterateWebhookEndpoints(params: Omit<PageParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<WebhookEndpoint> {
    return this.paginate((cursor) => this.listWebhookEndpoints({ ...params, ...(cursor ? { cursor } : {}) }, opts));
  }

  /** GET /v1/webhook-endpoints/{id}. */
  async getWebhookEndpoint(endpointId: string, opts: CallOptions = {}): Promise<WithResponse<WebhookEndpoint>> {
    return (await this.request<WebhookEndpoint>({ method: 'GET', path: `/v1/webhook-endpoints/${seg(endpointId)}`, ...opts })).body;
  }

  /** PATCH /v1/webhook-endpoints/{id} (url, eventTypes, description, status), as a job. */
  async updateWebhookEndpoint(endpointId: string, changes: WebhookEndpointUpdate, opts: MutationOptions = {}): Promise<WithResponse<WebhookEndpoint>> {
    return this.mutate<WebhookEndpoint>(() => ({ method: 'PATCH', path: `/v1/webhook-endpoints/${seg(endpointId)}`, json: changes }), opts);
  }

  /** DELETE /v1/webhook-endpoints/{id}, as a job. */
  async deleteWebhookEndpoint(endpointId: string, opts: MutationOptions = {}): Promise<WithResponse<WebhookEndpointDeleted>> {
    return this.mutate<WebhookEndpointDeleted>(() => ({ method: 'DELETE', path: `/v1/webhook-endpoints/${seg(endpointId)}` }), opts);
  }

  /** GET /v1/webhook-endpoints/{id}/secret: the `whsec_…` secret deliveries are signed with (needs webhooks/write). */
  async getWebhookSecret(endpointId: string, opts: CallOptions = {}): Promise<string> {
    return (await this.request<{ secret: string }>({ method: 'GET', path: `/v1/webhook-endpoints/${seg(endpointId)}/secret`, ...opts })).body.secret;
  }

  /** POST /v1/webhook-endpoints/{id}/secret/rotate, as a job: the new secret signs at once, the old one beside it for 24 h. */
  async rotateWebhookSecret(endpointId: string, opts: MutationOptions = {}): Promise<WithResponse<WebhookSecretRotated>> {
    return this.mutate<WebhookSecretRotated>(() => ({ method: 'POST', path: `/v1/webhook-endpoints/${seg(endpointId)}/secret/rotate`, json: {} }), opts);
  }

  /** GET /v1/webhook-endpoints/{id}/deliveries: one page of the delivery log, newest first. */
  async listWebhookDeliveries(endpointId: string, params: WebhookDeliveryListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<WebhookDelivery>>> {
    return (
      await this.request<Page<WebhookDelivery>>({ method: 'GET', path: `/v1/webhook-endpoints/${seg(endpointId)}/deliveries`, query: { ...params }, ...opts })
    ).body;
  }

  /** Every delivery to an endpoint matching the filters, page after page. */
  iterateWebhookDeliveries(endpointId: string, params: Omit<WebhookDeliveryListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<WebhookDelivery> {
    return this.paginate((cursor) => this.listWebhookDeliveries(endpointId, { ...params, ...(cursor ? { cursor } : {}) }, opts));
  }

  /** POST /v1/webhook-endpoints/{id}/recover, as a job: sends every matching event since then again (and enables the endpoint). */
  async recoverWebhookEndpoint(endpointId: string, since: string | Date, opts: MutationOptions = {}): Promise<WithResponse<WebhookRecovered>> {
    const body = { since: since instanceof Date ? since.toISOString() : since };
    return this.mutate<WebhookRecovered>(() => ({ method: 'POST', path: `/v1/webhook-endpoints/${seg(endpointId)}/recover`, json: body }), opts);
  }

  /** POST /v1/webhook-endpoints/{id}/ping, as a job: sends a webhook_endpoint.ping event to that endpoint alone. */
  async pingWebhookEndpoint(endpointId: string, opts: MutationOptions = {}): Promise<WithResponse<WebhookPinged>> {
    return this.mutate<WebhookPinged>(() => ({ method: 'POST', path: `/v1/webhook-endpoints/${seg(endpointId)}/ping`, json: {} }), opts);
  }

  /**
   * Polls a job until it settles, never sooner than Retry-After says, and returns it (succeeded or
   * failed). Takes the job id or its statusUrl; the poll goes to this client's base URL, so the
   * token is never sent anywhere else.
   */
  async waitForJob<T = unknown>(jobIdOrStatusUrl: string, opts: WaitOptions = {}): Promise<SettledJob<T>> {
    const id = jobIdOf(jobIdOrStatusUrl);
    return this.stillFollowing(id, opts.signal, () => this.pollJob<T>(id, opts));
  }

  private async pollJob<T>(id: string, opts: WaitOptions): Promise<SettledJob<T>> {
    const deadline = opts.timeoutMs !== undefined ? Date.now() + opts.timeoutMs : Infinity;
    const pollWait = opts.pollWaitSeconds ?? this.pollWaitSeconds;
    for (;;) {
      const left = deadline - Date.now();
      const wait = Math.max(0, Math.min(pollWait, Math.floor(left / 1000)));
      const res = await this.request<Job<T>>({
        method: 'GET',
        path: `/v1/jobs/${seg(id)}`,
        ...(wait > 0 ? { headers: { prefer: `wait=${wait}` }, holdSeconds: wait } : {}),
        ...pick(opts),
      });
      const job = res.body;
      if (job.status !== 'processing') return job;
      opts.onPoll?.(job);
      const afterS = Math.max(parseRetryAfter(res.headers.get('retry-after')) ?? DEFAULT_POLL_SECONDS, job.retryAfter ?? 0, 1);
      if (Date.now() + afterS * 1000 > deadline) {
        throw new PartnerTimeoutError(`job ${id} did not settle in time; read it later with getJob`, id);
      }
      await sleep(afterS * 1000, opts.signal);
    }
  }

  /** Runs `wait` for job `id`; when the caller's signal aborts it, a PartnerAbortError naming the job. */
  private async stillFollowing<R>(id: string, signal: AbortSignal | undefined, wait: () => Promise<R>): Promise<R> {
    try {
      return await wait();
    } catch (err) {
      if (signal?.aborted && !(err instanceof PartnerError)) {
        throw new PartnerAbortError(`stopped waiting for job ${id}; it goes on: follow it with waitForJob('${id}')`, id, { cause: err });
      }
      throw err;
    }
  }

  // ---- the mutation pattern ----------------------------------------------------------------

  /**
   * Sends a mutation and, when it is accepted as a job, polls it to the end. A job that failed with
   * a retryable error is tried again with a new Idempotency-Key (the old key would replay the
   * failure), unless the caller chose the key.
   */
  private async mutate<T>(spec: () => RequestSpec, opts: MutationOptions): Promise<WithResponse<T>> {
    const deadline = opts.timeoutMs !== undefined ? Date.now() + opts.timeoutMs : undefined;
    const rounds = opts.maxRetries !== undefined ? opts.maxRetries + 1 : this.maxAttempts;
    for (let round = 1; ; round++) {
      const key = opts.idempotencyKey ?? crypto.randomUUID();
      try {
        const left = deadline !== undefined ? deadline - Date.now() : undefined;
        const wait = left !== undefined ? Math.min(opts.wait ?? this.wait, Math.max(0, Math.floor(left / 1000))) : opts.wait;
        const outcome = await this.send<T>(spec(), key, { ...opts, ...(wait !== undefined ? { wait } : {}) });
        if (outcome.settled) return outcome.result as WithResponse<T>;
        opts.onAccepted?.(outcome.job);
        // The 202's Retry-After is the time to the first poll.
        const firstPollMs = outcome.retryAfterSeconds * 1000;
        if (deadline !== undefined && Date.now() + firstPollMs > deadline) {
          throw new PartnerTimeoutError(`job ${outcome.job.id} did not settle in time; read it later with getJob`, outcome.job.id);
        }
        const jobId = outcome.job.id;
        await this.stillFollowing(jobId, opts.signal, () => sleep(firstPollMs, opts.signal));
        const job = await this.waitForJob<T>(jobId, {
          ...opts,
          ...(deadline !== undefined ? { timeoutMs: Math.max(0, deadline - Date.now()) } : {}),
        });
        if (job.status === 'succeeded') {
          const polled = lastResponseOf(job);
          return attachResponse(job.result as WithResponse<T>, { status: 200, requestId: polled?.requestId, jobId, replayed: outcome.replayed });
        }
        throw PartnerApiError.fromJob(job);
      } catch (err) {
        const retry = err instanceof PartnerApiError && err.jobId !== undefined && err.retryable && !opts.idempotencyKey && round < rounds;
        if (!retry) throw err;
        const delay = Math.max((err.retryAfterSeconds ?? 0) * 1000, backoffMs(round, this.backoff));
        if (deadline !== undefined && Date.now() + delay > deadline) throw err;
        await sleep(delay, opts.signal);
      }
    }
  }

  /** One mutation request (with its resends): 200 → the result, 202 → the handle. */
  private async send<T>(spec: RequestSpec, key: string, opts: Omit<MutationOptions, 'timeoutMs' | 'onPoll'>): Promise<MutationOutcome<T>> {
    const wait = Math.max(0, Math.min(30, Math.floor(opts.wait ?? this.wait)));
    const res = await this.request<T | JobHandle>({
      ...spec,
      ...pick(opts),
      headers: { ...spec.headers, 'idempotency-key': key, prefer: `wait=${wait}` },
      holdSeconds: wait,
    });
    const replayed = res.headers.get('idempotent-replayed') === 'true';
    if (res.status === 202) {
      const retryAfterSeconds = parseRetryAfter(res.headers.get('retry-after')) ?? DEFAULT_POLL_SECONDS;
      return { settled: false, job: res.body as JobHandle, replayed, retryAfterSeconds };
    }
    return { settled: true, result: res.body as T, replayed };
  }

  private uploadSpec(submissionId: string, file: Blob | Uint8Array, opts: UploadOptions): RequestSpec {
    const blob = file instanceof Blob ? file : new Blob([file as Uint8Array<ArrayBuffer>]);
    const named = opts.fileName ?? (typeof File !== 'undefined' && blob instanceof File && blob.name ? blob.name : undefined);
    // Without a media type or a file name to type it by, the API could only refuse the upload (415).
    if (!opts.contentType && !blob.type && !(named && /\.[A-Za-z0-9]+$/.test(named))) {
      throw new TypeError(
        'uploadAttachment: the file has no media type and no file name with an extension; pass contentType (e.g. "application/pdf") ' +
          'or fileName (e.g. "loss-runs.pdf"), or a File/Blob that has a type',
      );
    }
    const fileName = named ?? 'attachment';
    const contentType = opts.contentType ?? (blob.type || 'application/octet-stream');
    const form = multipartBody(blob, fileName, contentType, opts.documentType ? { documentType: opts.documentType } : {});
    return {
      method: 'POST',
      path: `/v1/submissions/${seg(submissionId)}/attachments`,
      body: (stop) => ({ body: form.stream(opts.onProgress, stop), contentType: form.contentType, length: form.length }),
    };
  }

  private async *paginate<T>(page: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const p = await page(cursor);
      yield* p.items;
      cursor = p.nextCursor ?? undefined;
    } while (cursor);
  }

  // ---- one request, with its retries ---------------------------------------------------------

  private async request<T>(spec: RequestSpec): Promise<ApiAnswer<T>> {
    const url = new URL(`${this.baseUrl}${spec.path}`);
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const principalId = spec.principalId ?? this.principalId;
    const maxAttempts = spec.maxRetries !== undefined ? Math.max(0, spec.maxRetries) + 1 : this.maxAttempts;
    // The call's own time limit (timeoutMs) joins the caller's signal; running out is not an abort.
    const callTimeout = spec.timeoutMs !== undefined ? AbortSignal.timeout(spec.timeoutMs) : undefined;
    const signal = callTimeout ? AbortSignal.any([...(spec.signal ? [spec.signal] : []), callTimeout]) : spec.signal;
    const timedOut = () => new PartnerNetworkError(`${spec.method} ${url.pathname} did not complete within ${spec.timeoutMs} ms`);
    let refreshedToken = false;
    let lastNetworkError: unknown;

    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (spec.signal?.aborted) throw abortReason(spec.signal);
      if (callTimeout?.aborted) throw timedOut();
      const token = await this.tokens.get(signal).catch((err: unknown) => {
        throw callTimeout?.aborted && !spec.signal?.aborted ? timedOut() : err;
      });
      const headers: Record<string, string> = {
        accept: 'application/json',
        'user-agent': this.userAgent,
        ...spec.headers,
        authorization: `Bearer ${token}`,
      };
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
        if (res.ok && spec.stream) this.noticeDeprecation(spec.method, url.pathname, res.headers);
        if (res.ok && spec.stream) return { status: res.status, headers: res.headers, body: res.body as T };
        const text = await res.text().catch((err: unknown) => {
          throw new BodyReadError('the response body could not be read', { cause: err });
        });
        body = text === '' ? undefined : parseJson(text);
        if (!res.ok && init.duplex) stopSending.abort();
      } catch (err) {
        if (spec.signal?.aborted) throw abortReason(spec.signal);
        if (callTimeout?.aborted) throw timedOut();
        // No answer (refused, reset, dropped mid-body, timed out): send the same request again. Every
        // request is safe to resend: reads are, and mutations carry their Idempotency-Key.
        lastNetworkError = err;
        if (attempt < maxAttempts) await this.pause(backoffMs(attempt, this.backoff), spec.signal, callTimeout, timedOut);
        continue;
      }

      this.noticeDeprecation(spec.method, url.pathname, res.headers);
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
      // A failed job is not retried here: the same key would replay it (see mutate()).
      if (!error.retryable || error.jobId !== undefined || attempt >= maxAttempts) throw error;
      await this.pause(Math.max((error.retryAfterSeconds ?? 0) * 1000, backoffMs(attempt, this.backoff)), spec.signal, callTimeout, timedOut);
    }
    throw new PartnerNetworkError(`${spec.method} ${url.pathname} failed after ${maxAttempts} attempts: ${describe(lastNetworkError)}`, {
      cause: lastNetworkError,
    });
  }

  /** Sleeps between attempts; the caller's abort rethrows its reason, the call's time limit a timeout. */
  private async pause(ms: number, signal: AbortSignal | undefined, callTimeout: AbortSignal | undefined, timedOut: () => Error): Promise<void> {
    const both = callTimeout ? AbortSignal.any([...(signal ? [signal] : []), callTimeout]) : signal;
    try {
      await sleep(ms, both);
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      if (callTimeout?.aborted) throw timedOut();
      throw err;
    }
  }

  /** Tells the caller, once per operation, that the API has deprecated it. */
  private noticeDeprecation(method: string, path: string, headers: Headers): void {
    const deprecation = headers.get('deprecation');
    if (deprecation === null) return;
    const operation = `${method} ${operationPath(path)}`;
    if (this.deprecationsSeen.has(operation)) return;
    this.deprecationsSeen.add(operation);
    const at = /^@(-?\d+)$/.exec(deprecation.trim());
    const sunset = headers.get('sunset');
    const link = /<([^>]*)>\s*;[^,]*rel="?deprecation"?/i.exec(headers.get('link') ?? '')?.[1];
    this.onDeprecation({
      operation,
      deprecatedAt: at ? new Date(Number(at[1]) * 1000) : undefined,
      sunset: sunset && !Number.isNaN(Date.parse(sunset)) ? new Date(sunset) : undefined,
      link,
    });
  }
}

/** The operation a path belongs to: ids (UUIDs, job ids) shown as `{id}`. */
function operationPath(path: string): string {
  return path
    .split('/')
    .map((s) => (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s) || /^job_/.test(s) ? '{id}' : s))
    .join('/');
}

/** The one-line warning for a deprecated operation. */
export function deprecationMessage(n: DeprecationNotice): string {
  const sunset = n.sunset ? `; it stops working on ${n.sunset.toISOString().slice(0, 10)}` : '';
  const link = n.link ? `; see ${n.link}` : '';
  return `warning: ${n.operation} is deprecated${sunset}${link}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Attaches `lastResponse` to an object result, non-enumerable (JSON output stays the API's). */
function attachResponse<T>(body: T, info: LastResponse): T {
  if (isRecord(body) && Object.isExtensible(body)) {
    Object.defineProperty(body, 'lastResponse', { value: info, enumerable: false, configurable: true, writable: false });
  }
  return body;
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

/** A path segment. */
const seg = (s: string): string => encodeURIComponent(s);

/** The job id of a handle id or a statusUrl (…/v1/jobs/{id}). */
function jobIdOf(idOrUrl: string): string {
  if (/^https?:\/\//i.test(idOrUrl)) {
    const last = new URL(idOrUrl).pathname.split('/').filter(Boolean).pop();
    if (!last) throw new TypeError(`not a job statusUrl: ${idOrUrl}`);
    return decodeURIComponent(last);
  }
  return idOrUrl;
}

/** The call options a nested request passes on. */
function pick(opts: CallOptions): CallOptions {
  return {
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.principalId !== undefined ? { principalId: opts.principalId } : {}),
    ...(opts.maxRetries !== undefined ? { maxRetries: opts.maxRetries } : {}),
  };
}

/** The file name of a Content-Disposition header, preferring filename* (RFC 6266, RFC 5987). */
function fileNameOf(header: string | null): string | undefined {
  if (!header) return undefined;
  const star = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (star?.[2]) {
    try {
      return decodeURIComponent(star[2].trim());
    } catch {
      // fall back to filename
    }
  }
  const plain = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header) ?? /filename\s*=\s*([^;\s]+)/i.exec(header);
  return plain?.[1]?.replace(/\\(.)/g, '$1');
}

