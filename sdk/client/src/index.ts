// @partner/sdk: the TypeScript client of the Partner Submission Service. Node 20+; one dependency, jose (receipts).
// PartnerClient holds one client per resource (client.submissions, client.jobs, …); each resource's
// file exports its client and its types, generated from the OpenAPI document (wire-types.ts).
export { PartnerClient } from './client.js';
export { lastResponseOf, SDK_VERSION } from './transport.js';
export type { LastResponse, WithResponse } from './transport.js';
export { deprecationMessage } from './deprecation.js';
export type { DeprecationNotice } from './deprecation.js';
export type { CallOptions, MutationOptions, PartnerClientOptions, RequestEvent, ResponseEvent, UploadOptions, WaitOptions } from './options.js';
export type { MutationOutcome } from './mutations.js';
// Every error class and the error-code types (errors.ts exports nothing else).
export * from './errors.js';
export type { UploadProgress } from './multipart.js';
// The types every resource shares, then each resource's client and types.
export type * from './types.js';
export type { Address, Applicant, Submission, SubmissionCreate, SubmissionListParams, SubmissionResult, Submissions, ValidationError, ValidationResult } from './submissions.js';
export type { Clearance, ClearanceBasis, ClearanceStatus, SubmissionStatus, SubmissionWithdraw, Withdrawal, WithdrawalReason } from './clearance.js';
export type { Policies, Policy, PolicyDocument, PolicyDocumentDownload, PolicyListParams, PolicyStatus } from './policies.js';
export { offerSha256, QuoteBinding, type AcceptedOffer } from './quote-bind.js';
export type {
  CanceledErrorObject,
  Job,
  JobCanceled,
  JobFailed,
  JobHandle,
  JobKind,
  JobListItem,
  JobListParams,
  JobProcessing,
  Jobs,
  JobStatus,
  JobSucceeded,
  SettledJob,
} from './jobs.js';
export type { Attachment, AttachmentDeleted, AttachmentDownload, Attachments, DocumentType } from './attachments.js';
export type { AttachmentRule, Product, ProductListParams, ProductRequirements, Products } from './products.js';
export { EVENT_TYPES, FEED_EVENT_TYPES } from './events.js';
export type { EventDataMap, EventFeed, EventListParams, EventPage, EventType, FeedEventType, FollowOptions, FollowParams, FollowStart, PartnerEvent } from './events.js';
export type {
  CreatedWebhookEndpoint,
  WebhookDelivery,
  WebhookDeliveryListParams,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointDeleted,
  WebhookEndpoints,
  WebhookEndpointUpdate,
  WebhookEventType,
  WebhookPinged,
  WebhookRecovered,
  WebhookSecretRotated,
} from './webhook-endpoints.js';
export type { RequestLogEntry, RequestLogItem, RequestLogListParams, Requests } from './requests.js';
// webhooks.verify/sign/newSecret, WebhookVerificationError and VerifyOptions.
export * from './webhooks.js';
// Signed receipts: verifyReceipt / verifyChain (offline, jose) and their types.
export { receiptHash, ReceiptVerificationError, verifyChain, verifyReceipt } from './receipts.js';
export type { ReceiptClaims, ReceiptItem, ReceiptKey, ReceiptKeySet, ReceiptListParams, Receipts, VerifyChainOptions } from './receipts.js';
// Quotes: the client, verifyOffer (offline, jose, against the receipt keys) and their types.
export { OFFER_TYP, offerHash, OfferVerificationError, verifyOffer } from './quotes.js';
export type { OfferClaims, Quote, QuoteDecide, QuoteListParams, QuoteOption, QuoteReason, QuoteRequest, Quotes, QuoteStatus, QuotesCreated } from './quotes.js';
export type { Console, ConsoleSessionCreate, ConsoleSessionLink } from './console.js';
// Test clocks (UAT only): the client class and their types.
export type { TestClock, TestClockAdvance, TestClockAdvanced, TestClockCreate, TestClockDeleted, TestClockListParams, TestClocks } from './test-clocks.js';
