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
// As temporal's client splits its `connection` from its workflow and schedule clients, the work is
// done by one connection (connection.ts: the transport, the jobs, the mutation pattern) and one client
// per resource, each in its own file with its types: `client.submissions`, `client.policies`,
// `client.jobs`, `client.attachments`, `client.products`, `client.receipts`, `client.events`,
// `client.webhookEndpoints`. A new resource is a new file and two lines here (its field and its
// `new`). The flat methods below (createSubmission, listPolicies, …) are the same calls under the
// names the SDK has always had.
import { Attachments, type Attachment, type AttachmentDeleted, type AttachmentDownload } from './attachments.js';
import type { SubmissionWithdraw } from './clearance.js';
import { connect, type Connection } from './connection.js';
import { Console } from './console.js';
import { EventFeed, type EventListParams, type EventPage, type FollowOptions, type FollowParams, type PartnerEvent } from './events.js';
import type { Job, JobCanceled, JobListItem, JobListParams, Jobs, SettledJob } from './jobs.js';
import type { MutationOutcome } from './mutations.js';
import type { CallOptions, MutationOptions, PartnerClientOptions, UploadOptions, WaitOptions } from './options.js';
import { Policies, type Policy, type PolicyListParams } from './policies.js';
import { Products, type Product, type ProductListParams, type ProductRequirements } from './products.js';
import { Quotes, type QuoteRequest, type QuotesCreated } from './quotes.js';
import { TestClocks } from './test-clocks.js';
import { Receipts, type ReceiptItem, type ReceiptKeySet, type ReceiptListParams } from './receipts.js';
import { Requests } from './requests.js';
import { Submissions, type Submission, type SubmissionCreate, type SubmissionListParams, type SubmissionResult, type ValidationResult } from './submissions.js';
import type { WithResponse } from './transport.js';
import type { Health, Page, PageParams } from './types.js';
import {
  WebhookEndpoints,
  type CreatedWebhookEndpoint,
  type WebhookDelivery,
  type WebhookDeliveryListParams,
  type WebhookEndpoint,
  type WebhookEndpointCreate,
  type WebhookEndpointDeleted,
  type WebhookEndpointUpdate,
  type WebhookPinged,
  type WebhookRecovered,
  type WebhookSecretRotated,
} from './webhook-endpoints.js';

export class PartnerClient {
  private readonly connection: Connection;
  /** Jobs: get, list, iterate, cancel, waitFor. */
  readonly jobs: Jobs;
  /** Policies: list, iterate, get, documents, downloadDocument. */
  readonly policies: Policies;
  /** Products and their requirements: list, iterate, get, requirements. */
  readonly products: Products;
  /** Submissions: create, start, withdraw, validate, get, list, iterate. */
  readonly submissions: Submissions;
  /** Signed receipts: list, iterate, ofSubmission, keys (verify them offline with verifyReceipt / verifyChain). */
  readonly receipts: Receipts;
  /** A submission's attachments: upload, startUpload, list, iterate, get, download, delete. */
  readonly attachments: Attachments;
  /** The event feed: list, follow, get. */
  readonly events: EventFeed;
  /** Webhook endpoints: create, list, iterate, get, update, delete, secret, rotateSecret, deliveries, iterateDeliveries, recover, ping. */
  readonly webhookEndpoints: WebhookEndpoints;
  /** Quotes: create, get, list, iterate, decideReferral (UAT), bind; verify offers offline with verifyOffer. */
  readonly quotes: Quotes;
  /** The request log: list, iterate, get. */
  readonly requests: Requests;
  /** The partner console: createSession (a single-use browser link). */
  readonly console: Console;
  /** UAT only: test clocks (create, get, list, iterate, advance, delete). */
  readonly testClocks: TestClocks;

  constructor(opts: PartnerClientOptions) {
    this.connection = connect(opts);
    this.jobs = this.connection.jobs;
    this.policies = new Policies(this.connection);
    this.products = new Products(this.connection);
    this.submissions = new Submissions(this.connection);
    this.receipts = new Receipts(this.connection);
    this.attachments = new Attachments(this.connection);
    this.events = new EventFeed(this.connection);
    this.webhookEndpoints = new WebhookEndpoints(this.connection);
    this.quotes = new Quotes(this.connection);
    this.requests = new Requests(this.connection);
    this.console = new Console(this.connection);
    this.testClocks = new TestClocks(this.connection);
  }

  /** POST /v1/submissions/{id}/quotes (quotes.create): `{submissionId, quotes}` once the job has succeeded. */
  requestQuotes(submissionId: string, input: QuoteRequest, opts: MutationOptions = {}): Promise<WithResponse<QuotesCreated>> {
    return this.quotes.create(submissionId, input, opts);
  }

  /**
   * The access token the client uses (fetched, or cached until the refresh margin). Useful to check
   * credentials, or to call the API with another tool.
   */
  accessToken(opts: Pick<CallOptions, 'signal'> = {}): Promise<string> {
    return this.connection.transport.accessToken(opts.signal);
  }

  /** GET /v1/health: who the credentials belong to. */
  async health(opts: CallOptions = {}): Promise<WithResponse<Health>> {
    return (await this.connection.transport.request<Health>({ method: 'GET', path: '/v1/health', ...opts })).body;
  }

  // ---- products and their requirements ----------------------------------------------------

  /** GET /v1/products: one page of the catalogue (the same for every partner). */
  async listProducts(params: ProductListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<Product>>> {
    return this.products.list(params, opts);
  }

  /** Every product, page after page. */
  iterateProducts(params: Omit<ProductListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Product> {
    return this.products.iterate(params, opts);
  }

  /** GET /v1/products/{id}. */
  async getProduct(productId: string, opts: CallOptions = {}): Promise<WithResponse<Product>> {
    return this.products.get(productId, opts);
  }

  /** GET /v1/products/{id}/requirements, cached by ETag (a repeated call costs a 304). */
  async getProductRequirements(productId: string, opts: CallOptions = {}): Promise<WithResponse<ProductRequirements>> {
    return this.products.requirements(productId, opts);
  }

  /** POST /v1/submissions/validate: every rule a create applies, answered at once; creates nothing. */
  async validateSubmission(body: SubmissionCreate | Record<string, unknown>, opts: CallOptions = {}): Promise<WithResponse<ValidationResult>> {
    return this.submissions.validate(body, opts);
  }

  // ---- policies ---------------------------------------------------------------------------

  /** GET /v1/policies: one page. */
  async listPolicies(params: PolicyListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<Policy>>> {
    return this.policies.list(params, opts);
  }

  /** Every policy matching the filters, page after page. */
  iteratePolicies(params: Omit<PolicyListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Policy> {
    return this.policies.iterate(params, opts);
  }

  /** GET /v1/policies/{id}. */
  async getPolicy(policyId: string, opts: CallOptions = {}): Promise<WithResponse<Policy>> {
    return this.policies.get(policyId, opts);
  }

  // ---- jobs -------------------------------------------------------------------------------

  /** GET /v1/jobs: one page of the partner's jobs, newest first. */
  async listJobs(params: JobListParams = {}, opts: CallOptions = {}): Promise<Page<JobListItem>> {
    return this.jobs.list(params, opts);
  }

  /** Every job matching the filters, page after page. */
  iterateJobs(params: Omit<JobListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<JobListItem> {
    return this.jobs.iterate(params, opts);
  }

  /** GET /v1/jobs/{id}: the settled job, or `processing`. `wait` holds the request up to that many seconds. */
  async getJob<T = unknown>(jobIdOrStatusUrl: string, opts: CallOptions & { wait?: number } = {}): Promise<Job<T>> {
    return this.jobs.get<T>(jobIdOrStatusUrl, opts);
  }

  /**
   * POST /v1/jobs/{id}/cancel: stops a job that has not started. Resolves with the job, `canceled`
   * (also when an earlier cancel did it); it never takes effect, and a mutation waiting on it throws
   * JobCanceledError. Throws JobNotCancelableError (409 job_not_cancelable) when the job has already
   * started or settled: of a cancel and a worker racing, exactly one wins, and the answer says which.
   * Needs the write permission of the job's kind (PartnerPermissionError without it).
   */
  async cancelJob(jobIdOrStatusUrl: string, opts: CallOptions = {}): Promise<WithResponse<JobCanceled>> {
    return this.jobs.cancel(jobIdOrStatusUrl, opts);
  }

  /**
   * Polls a job until it settles, never sooner than Retry-After says, and returns it (succeeded,
   * failed or canceled). Takes the job id or its statusUrl; the poll goes to this client's base URL, so the
   * token is never sent anywhere else.
   */
  async waitForJob<T = unknown>(jobIdOrStatusUrl: string, opts: WaitOptions = {}): Promise<SettledJob<T>> {
    return this.jobs.waitFor<T>(jobIdOrStatusUrl, opts);
  }

  // ---- submissions ------------------------------------------------------------------------

  /** GET /v1/submissions: one page of the partner's submissions, newest first. */
  async listSubmissions(params: SubmissionListParams = {}, opts: CallOptions = {}): Promise<Page<Submission>> {
    return this.submissions.list(params, opts);
  }

  /** Every submission matching the filters, page after page (e.g. { externalRef } to find a lost one). */
  iterateSubmissions(params: Omit<SubmissionListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Submission> {
    return this.submissions.iterate(params, opts);
  }

  /** POST /v1/submissions, the whole pattern: resolves with the result once the job has succeeded. */
  async createSubmission(input: SubmissionCreate, opts: MutationOptions = {}): Promise<WithResponse<SubmissionResult>> {
    return this.submissions.create(input, opts);
  }

  /** POST /v1/submissions without polling: the result if it settled within the wait, else the job handle. */
  startSubmission(input: SubmissionCreate, opts: Omit<MutationOptions, 'timeoutMs' | 'onPoll'> = {}): Promise<MutationOutcome<SubmissionResult>> {
    return this.submissions.start(input, opts);
  }

  /** POST /v1/submissions/{id}/withdraw: resolves with the withdrawn submission once the job has succeeded. */
  async withdrawSubmission(submissionId: string, input: SubmissionWithdraw, opts: MutationOptions = {}): Promise<WithResponse<Submission>> {
    return this.submissions.withdraw(submissionId, input, opts);
  }

  /** GET /v1/submissions/{id}. */
  async getSubmission(submissionId: string, opts: CallOptions = {}): Promise<WithResponse<Submission>> {
    return this.submissions.get(submissionId, opts);
  }

  // ---- receipts (verify them offline with verifyReceipt / verifyChain) ----------------------

  /** GET /v1/receipts: one page of the partner's receipt chain, in seq order. */
  async listReceipts(params: ReceiptListParams = {}, opts: CallOptions = {}): Promise<Page<ReceiptItem>> {
    return this.receipts.list(params, opts);
  }

  /** The partner's whole receipt chain (or from afterSeq on), page after page. */
  iterateReceipts(params: Omit<ReceiptListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<ReceiptItem> {
    return this.receipts.iterate(params, opts);
  }

  /** GET /v1/submissions/{id}/receipts: the submission's and its attachments' receipts. */
  async listSubmissionReceipts(submissionId: string, params: Omit<ReceiptListParams, 'afterSeq'> = {}, opts: CallOptions = {}): Promise<Page<ReceiptItem>> {
    return this.receipts.ofSubmission(submissionId, params, opts);
  }

  /** GET /.well-known/receipt-keys.json: every receipt public key ever used (keep a copy to verify offline). */
  async getReceiptKeys(opts: CallOptions = {}): Promise<ReceiptKeySet> {
    return this.receipts.keys(opts);
  }

  // ---- attachments ------------------------------------------------------------------------

  /**
   * POST /v1/submissions/{id}/attachments: uploads the file (a Blob or File, or bytes) and resolves
   * with the attachment record once the job has succeeded. A resend re-reads the Blob.
   */
  async uploadAttachment(submissionId: string, file: Blob | Uint8Array, opts: UploadOptions = {}): Promise<WithResponse<Attachment>> {
    return this.attachments.upload(submissionId, file, opts);
  }

  /** The upload without polling: the record if it settled within the wait, else the job handle. */
  startAttachmentUpload(submissionId: string, file: Blob | Uint8Array, opts: Omit<UploadOptions, 'timeoutMs' | 'onPoll'> = {}): Promise<MutationOutcome<Attachment>> {
    return this.attachments.startUpload(submissionId, file, opts);
  }

  /** GET /v1/submissions/{id}/attachments: one page. */
  async listAttachments(submissionId: string, params: PageParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<Attachment>>> {
    return this.attachments.list(submissionId, params, opts);
  }

  /** Every attachment of a submission, page after page. */
  iterateAttachments(submissionId: string, params: Omit<PageParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Attachment> {
    return this.attachments.iterate(submissionId, params, opts);
  }

  /** GET /v1/submissions/{id}/attachments/{attachmentId}. */
  async getAttachment(submissionId: string, attachmentId: string, opts: CallOptions = {}): Promise<WithResponse<Attachment>> {
    return this.attachments.get(submissionId, attachmentId, opts);
  }

  /** GET .../content: the bytes as a stream (read it, or cancel it), with their type, size, name and sha256. */
  async downloadAttachment(submissionId: string, attachmentId: string, opts: CallOptions = {}): Promise<AttachmentDownload> {
    return this.attachments.download(submissionId, attachmentId, opts);
  }

  /** DELETE /v1/submissions/{id}/attachments/{attachmentId}, as a job; resolves once it has succeeded. */
  async deleteAttachment(submissionId: string, attachmentId: string, opts: MutationOptions = {}): Promise<WithResponse<AttachmentDeleted>> {
    return this.attachments.delete(submissionId, attachmentId, opts);
  }

  // ---- events -----------------------------------------------------------------------------

  /** GET /v1/events: one page of the event feed. `wait` holds an empty page up to that many seconds. */
  async listEvents(params: EventListParams = {}, opts: CallOptions & { wait?: number } = {}): Promise<EventPage> {
    return this.events.list(params, opts);
  }

  /**
   * Follows the event feed forever with long-poll, from where params says: `{ from: 'now' }`,
   * `{ from: 'start' }` (30 days of history first), `{ since }` or `{ cursor }`; ends when opts.signal
   * aborts (see events.ts).
   */
  followEvents(params: FollowParams, opts: FollowOptions = {}): AsyncGenerator<PartnerEvent> {
    return this.events.follow(params, opts);
  }

  /** GET /v1/events/{id}. */
  async getEvent(eventId: string, opts: CallOptions = {}): Promise<PartnerEvent> {
    return this.events.get(eventId, opts);
  }

  // ---- webhook endpoints (mutations are jobs, like every other; see webhooks.ts for verifying deliveries)

  /**
   * POST /v1/webhook-endpoints: resolves with the endpoint once the job has succeeded, and its signing
   * `secret` (yours, or made here when input.secret is left out): store it, it verifies every delivery.
   */
  async createWebhookEndpoint(input: WebhookEndpointCreate, opts: MutationOptions = {}): Promise<WithResponse<CreatedWebhookEndpoint>> {
    return this.webhookEndpoints.create(input, opts);
  }

  /** GET /v1/webhook-endpoints: one page, newest first. */
  async listWebhookEndpoints(params: PageParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<WebhookEndpoint>>> {
    return this.webhookEndpoints.list(params, opts);
  }

  /** Every webhook endpoint, page after page. */
  iterateWebhookEndpoints(params: Omit<PageParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<WebhookEndpoint> {
    return this.webhookEndpoints.iterate(params, opts);
  }

  /** GET /v1/webhook-endpoints/{id}. */
  async getWebhookEndpoint(endpointId: string, opts: CallOptions = {}): Promise<WithResponse<WebhookEndpoint>> {
    return this.webhookEndpoints.get(endpointId, opts);
  }

  /** PATCH /v1/webhook-endpoints/{id} (url, eventTypes, description, status), as a job. */
  async updateWebhookEndpoint(endpointId: string, changes: WebhookEndpointUpdate, opts: MutationOptions = {}): Promise<WithResponse<WebhookEndpoint>> {
    return this.webhookEndpoints.update(endpointId, changes, opts);
  }

  /** DELETE /v1/webhook-endpoints/{id}, as a job. */
  async deleteWebhookEndpoint(endpointId: string, opts: MutationOptions = {}): Promise<WithResponse<WebhookEndpointDeleted>> {
    return this.webhookEndpoints.delete(endpointId, opts);
  }

  /** GET /v1/webhook-endpoints/{id}/secret: the `whsec_…` secret deliveries are signed with (needs webhooks/write). */
  async getWebhookSecret(endpointId: string, opts: CallOptions = {}): Promise<string> {
    return this.webhookEndpoints.secret(endpointId, opts);
  }

  /** POST /v1/webhook-endpoints/{id}/secret/rotate, as a job: the new secret signs at once, the old one beside it for 24 h. */
  async rotateWebhookSecret(endpointId: string, opts: MutationOptions = {}): Promise<WithResponse<WebhookSecretRotated>> {
    return this.webhookEndpoints.rotateSecret(endpointId, opts);
  }

  /** GET /v1/webhook-endpoints/{id}/deliveries: one page of the delivery log, newest first. */
  async listWebhookDeliveries(endpointId: string, params: WebhookDeliveryListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<WebhookDelivery>>> {
    return this.webhookEndpoints.deliveries(endpointId, params, opts);
  }

  /** Every delivery to an endpoint matching the filters, page after page. */
  iterateWebhookDeliveries(endpointId: string, params: Omit<WebhookDeliveryListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<WebhookDelivery> {
    return this.webhookEndpoints.iterateDeliveries(endpointId, params, opts);
  }

  /** POST /v1/webhook-endpoints/{id}/recover, as a job: sends every matching event since then again (and enables the endpoint). */
  async recoverWebhookEndpoint(endpointId: string, since: string | Date, opts: MutationOptions = {}): Promise<WithResponse<WebhookRecovered>> {
    return this.webhookEndpoints.recover(endpointId, since, opts);
  }

  /** POST /v1/webhook-endpoints/{id}/ping, as a job: sends a webhook_endpoint.ping event to that endpoint alone. */
  async pingWebhookEndpoint(endpointId: string, opts: MutationOptions = {}): Promise<WithResponse<WebhookPinged>> {
    return this.webhookEndpoints.ping(endpointId, opts);
  }
}
