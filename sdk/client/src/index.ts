// @partner/sdk: the TypeScript client of the Partner Submission Service. Node 20+, no dependencies.
export { deprecationMessage, lastResponseOf, PartnerClient, SDK_VERSION } from './client.js';
export type {
  AttachmentDownload,
  CallOptions,
  DeprecationNotice,
  LastResponse,
  MutationOptions,
  MutationOutcome,
  PartnerClientOptions,
  RequestEvent,
  ResponseEvent,
  UploadOptions,
  WaitOptions,
  WithResponse,
} from './client.js';
export {
  PartnerAbortError,
  PartnerApiError,
  PartnerAuthError,
  PartnerError,
  PartnerIdempotencyError,
  PartnerNetworkError,
  PartnerNotFoundError,
  PartnerPermissionError,
  PartnerRateLimitError,
  PartnerTimeoutError,
  PartnerUnavailableError,
  PartnerValidationError,
} from './errors.js';
export type { ApiErrorCode, ErrorCode, PartnerApiErrorInit } from './errors.js';
export type { UploadProgress } from './multipart.js';
export type * from './types.js';
export type { EventListParams, EventPage, EventType, FollowOptions, PartnerEvent } from './events.js';
export type * from './list-types.js';
export { webhooks, WebhookVerificationError } from './webhooks.js';
export type {
  VerifyOptions,
  WebhookDelivery,
  WebhookDeliveryListParams,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointDeleted,
  WebhookEndpointUpdate,
  WebhookEventType,
  WebhookPinged,
  WebhookRecovered,
  WebhookSecretRotated,
} from './webhooks.js';
