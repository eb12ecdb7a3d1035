// @partner/sdk: the TypeScript client of the Partner Submission Service. Node 20+; one dependency, jose (receipts).
export { PartnerClient } from './client.js';
export { lastResponseOf, SDK_VERSION } from './transport.js';
export type { LastResponse, WithResponse } from './transport.js';
export { deprecationMessage } from './deprecation.js';
export type { DeprecationNotice } from './deprecation.js';
export type { CallOptions, MutationOptions, PartnerClientOptions, RequestEvent, ResponseEvent, UploadOptions, WaitOptions } from './options.js';
export type { MutationOutcome } from './mutations.js';
export type { AttachmentDownload } from './attachments.js';
// Every error class and the error-code types (errors.ts exports nothing else).
export * from './errors.js';
export type { UploadProgress } from './multipart.js';
export type * from './types.js';
export { EVENT_TYPES, FEED_EVENT_TYPES } from './events.js';
export type { EventDataMap, EventListParams, EventPage, EventType, FeedEventType, FollowOptions, FollowParams, FollowStart, PartnerEvent } from './events.js';
export type { AttachmentRule, Product, ProductListParams, ProductRequirements, ValidationError, ValidationResult } from './products.js';
export type * from './list-types.js';
export type { Clearance, ClearanceBasis, ClearanceStatus, SubmissionStatus, SubmissionWithdraw, Withdrawal, WithdrawalReason } from './clearance.js';
// webhooks.verify/sign/newSecret, WebhookVerificationError and the webhook types.
export * from './webhooks.js';
// Signed receipts: verifyReceipt / verifyChain (offline, jose) and their types.
export { receiptHash, ReceiptVerificationError, verifyChain, verifyReceipt } from './receipts.js';
export type { ReceiptClaims, ReceiptItem, ReceiptKey, ReceiptKeySet, ReceiptListParams } from './receipts.js';
