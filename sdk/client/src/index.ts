// @partner/sdk: the TypeScript client of the Partner Submission Service. Node 20+, no dependencies.
export { PartnerClient, SDK_VERSION } from './client.js';
export type {
  AttachmentDownload,
  CallOptions,
  MutationOptions,
  MutationOutcome,
  PartnerClientOptions,
  UploadOptions,
  WaitOptions,
} from './client.js';
export { PartnerApiError, PartnerAuthError, PartnerError, PartnerNetworkError, PartnerTimeoutError } from './errors.js';
export type { PartnerApiErrorInit } from './errors.js';
export type { UploadProgress } from './multipart.js';
export type * from './types.js';
