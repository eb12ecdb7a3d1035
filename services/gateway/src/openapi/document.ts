// The OpenAPI 3.1 document served at GET /v1/openapi.json: every operation, schema, header and
// error of the API (seed + API.md + docs/api.md). Built once per process from the environment's
// addresses: servers is {base_url}, and the OAuth2 client-credentials scheme carries the token URL
// and the environment's access scope. Per-operation permissions are enforced but, as the seed asks,
// not listed here. Test/support/conformance.ts checks every response the system tests receive
// against this document, so it stays true. This file holds the paths and the document's frame; the
// pieces operations share are in common.ts, the components in components.ts, and the event feed's
// and webhooks' paths and schemas in events.ts and webhooks.ts.
import { ALLOWED_MEDIA_TYPES } from '../attachments/media-types.js';
import { DEFAULT_MAX_JSON_VALUES, MAX_JSON_DEPTH } from '../http/json-scan.js';
import { ERROR_CODE_TABLE, ref } from './schemas.js';
import { eventPaths } from './events.js';
import { clearanceListParam, clearancePaths } from './clearance.js';
import { SUBMISSION_STATUS_NAMES } from '@partner/shared/domain/clearance';
import { productPaths } from './products.js';
import { receiptPaths } from './receipts.js';
import { webhookDeliveries, webhookPaths } from './webhooks.js';
import {
  apiHeaders,
  authErrors,
  baseHeaders,
  header,
  json,
  LIST_400,
  MUTATION_DESCRIPTION,
  mutationResponses,
  param,
  preferHeaders,
  response,
  timestampParam,
  type Obj,
} from './common.js';
import { components, SECURITY_SCHEME } from './components.js';
import type { OpenApiOptions } from './options.js';

export type { OpenApiOptions } from './options.js';
export { SECURITY_SCHEME } from './components.js';

export const API_VERSION = '1.0.0';

const EXAMPLE_JOB_ID = 'job_0199a3e47c1d7b529a0e3f2d4c5b6a72';
const EXAMPLE_SUBMISSION = {
  submissionId: '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71',
  submissionName: 'Acme Holdings LLC',
  status: 'submitted',
  externalRef: 'BROKER-REF-2041',
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a70',
  applicant: {
    legalName: 'Acme Holdings LLC',
    taxId: '123456789',
    address: { line1: '1 Main Street', city: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' },
  },
  principalId: 'demo-broker',
  createdAt: '2026-11-21T12:00:08.012Z',
  updatedAt: '2026-11-21T12:00:08.012Z',
  requirements: { version: 3, currentlyDue: ['attachments.loss_run'] },
  clearance: { status: 'cleared', basis: null, decidedAt: '2026-11-21T12:00:08.012Z' },
};

/** One job in each state, as the job list shows it (GET /v1/jobs/{jobId} shows the settled ones alike). */
const EXAMPLE_JOBS = {
  processing: { id: 'job_0199a3e57c1d7b529a0e3f2d4c5b6a73', kind: 'attachment.create', status: 'processing', createdAt: '2026-11-21T12:01:00.500Z', updatedAt: '2026-11-21T12:01:00.731Z' },
  succeeded: {
    id: EXAMPLE_JOB_ID,
    kind: 'submission.create',
    status: 'succeeded',
    result: {
      submissionId: EXAMPLE_SUBMISSION.submissionId,
      submissionName: 'Acme Holdings LLC',
      status: 'submitted',
      clearance: { status: 'cleared', basis: null, decidedAt: '2026-11-21T12:00:08.012Z' },
    },
    createdAt: '2026-11-21T12:00:08.000Z',
    updatedAt: '2026-11-21T12:00:08.012Z',
  },
  failed: {
    id: 'job_0199a3e37c1d7b529a0e3f2d4c5b6a71',
    kind: 'submission.create',
    status: 'failed',
    error: { code: 'unknown_product', message: 'the product does not exist or is not active', retryable: false },
    createdAt: '2026-11-21T11:59:00.000Z',
    updatedAt: '2026-11-21T11:59:00.020Z',
  },
  canceled: {
    id: 'job_0199a3e27c1d7b529a0e3f2d4c5b6a70',
    kind: 'submission.create',
    status: 'canceled',
    error: { code: 'canceled', message: 'the job was cancelled by its partner before it started', retryable: false },
    createdAt: '2026-11-21T11:58:00.000Z',
    updatedAt: '2026-11-21T11:58:03.410Z',
  },
};

const JOB_EXAMPLES: Obj = {
  succeeded: { summary: 'Succeeded, with its result', value: EXAMPLE_JOBS.succeeded },
  failed: { summary: 'Failed, with its error', value: EXAMPLE_JOBS.failed },
  canceled: { summary: 'Cancelled before it started, with the `canceled` error', value: EXAMPLE_JOBS.canceled },
  processing: { summary: 'Not settled yet (answered with Retry-After: 5)', value: { id: EXAMPLE_JOBS.processing.id, status: 'processing', retryAfter: 5 } },
};

const JOB_PAGE_EXAMPLES: Obj = {
  mixed: {
    summary: 'A running job, a succeeded one and a failed one; more pages follow',
    value: {
      items: [EXAMPLE_JOBS.processing, EXAMPLE_JOBS.succeeded, EXAMPLE_JOBS.failed],
      nextCursor: 'AQAAAZqj5HwAAZmj43wde1KaDj8tTFtqcWOlLwNsNk6g1u1Vh9Hrkg4',
    },
  },
  last: { summary: 'The last page', value: { items: [], nextCursor: null } },
};

const SUBMISSION_PAGE_EXAMPLES: Obj = {
  byExternalRef: {
    summary: 'GET /v1/submissions?externalRef=BROKER-REF-2041: the submission a lost job handle created',
    value: { items: [EXAMPLE_SUBMISSION], nextCursor: null },
  },
};

function paths(): Obj {
  const principal = param('PrincipalId');
  return {
    '/v1/openapi.json': {
      get: {
        operationId: 'getOpenApiDocument',
        tags: ['Reference'],
        summary: 'This document',
        description: 'The machine-readable reference of the API, for this environment. Needs no token. Other methods answer 405.',
        security: [],
        responses: {
          200: {
            description: 'The OpenAPI 3.1 document.',
            headers: baseHeaders(),
            content: json({
              type: 'object',
              required: ['openapi', 'info', 'paths'],
              properties: { openapi: { type: 'string', pattern: '^3\\.1\\.' }, info: { type: 'object' }, paths: { type: 'object' } },
            }),
          },
          405: response('MethodNotAllowed'),
          500: response('Internal'),
        },
      },
    },
    '/v1/health': {
      get: {
        operationId: 'getHealth',
        tags: ['Health'],
        summary: 'Who the credentials belong to',
        description: 'Echoes the tenant and partner the token is bound to, and the principal the request is attributed to with `x-principal-id`.',
        parameters: [principal],
        responses: {
          200: { description: 'The caller.', headers: apiHeaders(), content: json(ref('Health')) },
          ...authErrors(),
        },
      },
    },
    '/v1/policies': {
      get: {
        operationId: 'listPolicies',
        tags: ['Policies'],
        summary: 'List policies',
        description:
          "The calling partner's policies, newest first (by `createdAt`, then `policyId`; both immutable, so walking the pages " +
          'returns every policy that existed when the walk began exactly once). To pick up changes, list again with `updatedSince`. ' +
          'An unknown or repeated parameter, an out-of-range `limit`, a bad filter value or a foreign cursor is 400 `validation_error` ' +
          'naming every bad parameter in `details`.',
        parameters: [
          param('Limit'),
          param('Cursor'),
          { name: 'status', in: 'query', description: 'Only policies with this status.', schema: ref('PolicyStatus') },
          { name: 'productId', in: 'query', description: 'Only policies of this product.', schema: ref('Uuid') },
          {
            name: 'policyNumber',
            in: 'query',
            description: 'Only the policy with this exact number.',
            schema: { type: 'string', minLength: 1, maxLength: 64 },
          },
          {
            name: 'updatedSince',
            in: 'query',
            description: 'Only policies updated at or after this RFC 3339 timestamp (with a time zone; write `+` as `%2B`).',
            schema: { type: 'string', format: 'date-time', examples: ['2025-01-31T00:00:00Z'] },
          },
          principal,
        ],
        responses: {
          200: { description: 'One page of policies.', headers: apiHeaders(), content: json(ref('PolicyPage')) },
          400: response('BadRequest'),
          ...authErrors(),
        },
      },
    },
    '/v1/policies/{policyId}': {
      parameters: [param('PolicyId')],
      get: {
        operationId: 'getPolicy',
        tags: ['Policies'],
        summary: 'Read a policy',
        description: "One policy. Another partner's policy is indistinguishable from a missing one (404). Takes no query parameters (400).",
        parameters: [principal],
        responses: {
          200: { description: 'The policy.', headers: apiHeaders(), content: json(ref('Policy')) },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
    '/v1/submissions': {
      get: {
        operationId: 'listSubmissions',
        tags: ['Submissions'],
        summary: 'List submissions',
        description:
          "The calling partner's submissions, newest first (by `createdAt`, then `submissionId`; both immutable, so walking the pages " +
          'returns every submission that existed when the walk began exactly once, while new ones land ahead of it). Each item is ' +
          'exactly what `GET /v1/submissions/{id}` returns. For reconciliation: lost a job handle? Find the submission by the ' +
          '`externalRef` you sent. ' +
          LIST_400,
        parameters: [
          param('Limit'),
          param('Cursor'),
          { name: 'externalRef', in: 'query', description: 'Only submissions with exactly this `externalRef`.', schema: { type: 'string', minLength: 1, maxLength: 200 }, examples: { ref: { value: 'BROKER-REF-2041' } } },
          { name: 'status', in: 'query', description: 'Only submissions with this status.', schema: { type: 'string', enum: [...SUBMISSION_STATUS_NAMES] } },
          clearanceListParam,
          timestampParam('createdSince', 'Only submissions created at or after this'),
          timestampParam('updatedSince', 'Only submissions updated at or after this'),
          {
            name: 'principalId',
            in: 'query',
            description: 'Only submissions created by requests attributed to this principal.',
            schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$', examples: ['demo-broker'] },
          },
          principal,
        ],
        responses: {
          200: {
            description: 'One page of submissions.',
            headers: apiHeaders(),
            content: { 'application/json': { schema: ref('SubmissionPage'), examples: SUBMISSION_PAGE_EXAMPLES } },
          },
          400: response('BadRequest'),
          ...authErrors(),
        },
      },
      post: {
        operationId: 'createSubmission',
        tags: ['Submissions'],
        summary: 'Create a submission',
        description: `Creates a new-business submission. ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        requestBody: { required: true, description: 'At most 1 MiB of JSON.', content: json(ref('SubmissionCreate')) },
        responses: mutationResponses(ref('SubmissionResult'), 'The submission result.', [413, 415]),
      },
    },
    '/v1/submissions/{submissionId}': {
      parameters: [param('SubmissionId')],
      get: {
        operationId: 'getSubmission',
        tags: ['Submissions'],
        summary: 'Read a submission',
        description: "One submission. Another partner's submission is indistinguishable from a missing one (404).",
        parameters: [principal],
        responses: {
          200: { description: 'The submission.', headers: apiHeaders(), content: json(ref('Submission')) },
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
    '/v1/submissions/{submissionId}/attachments': {
      parameters: [param('SubmissionId')],
      post: {
        operationId: 'uploadAttachment',
        tags: ['Attachments'],
        summary: 'Attach a file to a submission',
        description:
          'Uploads a file as `multipart/form-data` (a `file` part and an optional `documentType` field). The bytes are stored before ' +
          'the job is queued; the job makes them an attachment, and its result is the attachment record. The file may be at most 25 MiB ' +
          '(configurable per environment; 413 beyond); empty files and unknown fields are 400; file types outside the allowlist 415. ' +
          "The submission must exist and be the caller's (404 before any byte is read); the job of an upload to a withdrawn " +
          `submission fails with 409 \`not_withdrawable\`. ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: ref('AttachmentUpload'),
              encoding: { file: { contentType: ['application/octet-stream', ...Object.keys(ALLOWED_MEDIA_TYPES)].join(', ') } },
            },
          },
        },
        responses: mutationResponses(ref('Attachment'), 'The attachment record.', [413, 415]),
      },
      get: {
        operationId: 'listAttachments',
        tags: ['Attachments'],
        summary: "List a submission's attachments",
        description: 'Newest first, paginated like policies. An unknown or repeated parameter, a bad `limit` or cursor is 400 `validation_error`.',
        parameters: [param('Limit'), param('Cursor'), principal],
        responses: {
          200: { description: 'One page of attachments.', headers: apiHeaders(), content: json(ref('AttachmentPage')) },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
    '/v1/submissions/{submissionId}/attachments/{attachmentId}': {
      parameters: [param('SubmissionId'), param('AttachmentId')],
      get: {
        operationId: 'getAttachment',
        tags: ['Attachments'],
        summary: 'Read an attachment record',
        parameters: [principal],
        responses: {
          200: { description: 'The attachment record.', headers: apiHeaders(), content: json(ref('Attachment')) },
          404: response('NotFound'),
          ...authErrors(),
        },
      },
      delete: {
        operationId: 'deleteAttachment',
        tags: ['Attachments'],
        summary: 'Delete an attachment',
        description:
          'Deletes the attachment and its bytes; the job result is `{attachmentId, deleted: true}`. Without an `Idempotency-Key` an ' +
          'attachment that does not exist is 404 at once; with one, a replay returns the original job, and a new key gets a job that ' +
          `fails with \`not_found\`. ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        responses: mutationResponses(ref('AttachmentDeleted'), 'The deletion.', []),
      },
    },
    '/v1/submissions/{submissionId}/attachments/{attachmentId}/content': {
      parameters: [param('SubmissionId'), param('AttachmentId')],
      get: {
        operationId: 'downloadAttachment',
        tags: ['Attachments'],
        summary: "Download an attachment's bytes",
        description: 'Streams the bytes with the stored `Content-Type`, `Content-Length`, `Content-Disposition` and `ETag` (the quoted sha256).',
        parameters: [param('IfNoneMatch'), principal],
        responses: {
          200: {
            description: 'The bytes.',
            headers: { ...apiHeaders(), 'Content-Disposition': header('Content-Disposition'), 'Content-Length': header('Content-Length'), ETag: header('ETag') },
            content: { '*/*': { schema: { description: 'The file, as it was uploaded.' } } },
          },
          304: { description: '`If-None-Match` matched the ETag: the copy the client holds is current.', headers: { ...apiHeaders(), ETag: header('ETag') } },
          404: response('NotFound'),
          ...authErrors(),
        },
      },
      head: {
        operationId: 'headAttachmentContent',
        tags: ['Attachments'],
        summary: "An attachment's content headers",
        description: 'As the download, without the bytes.',
        parameters: [param('IfNoneMatch'), principal],
        responses: {
          200: {
            description: 'The headers of the download.',
            headers: { ...apiHeaders(), 'Content-Disposition': header('Content-Disposition'), 'Content-Length': header('Content-Length'), ETag: header('ETag') },
          },
          304: { description: '`If-None-Match` matched the ETag.', headers: { ...apiHeaders(), ETag: header('ETag') } },
          404: { description: 'Not found (no body).', headers: apiHeaders() },
          ...authErrors(),
        },
      },
    },
    '/v1/jobs': {
      get: {
        operationId: 'listJobs',
        tags: ['Jobs'],
        summary: 'List jobs',
        description:
          "The calling partner's jobs, newest first (by `createdAt`, then `id`; both immutable, so walking the pages returns every job " +
          'that existed when the walk began exactly once, while new ones land ahead of it). A settled job is shown exactly as ' +
          '`GET /v1/jobs/{id}` shows it; an unsettled one as `{id, kind, status: "processing", createdAt, updatedAt}`. For ' +
          'reconciliation: find the jobs still running, or the ones that failed or were cancelled, since a time. ' +
          LIST_400,
        parameters: [
          param('Limit'),
          param('Cursor'),
          {
            name: 'status',
            in: 'query',
            description: '`processing` (not settled yet: accepted or running), `succeeded`, `failed` or `canceled`.',
            schema: ref('JobStatusFilter'),
          },
          { name: 'kind', in: 'query', description: 'Only jobs of this kind.', schema: ref('JobKind') },
          timestampParam('createdSince', 'Only jobs created at or after this'),
          timestampParam('createdBefore', 'Only jobs created before this'),
          principal,
        ],
        responses: {
          200: {
            description: 'One page of jobs.',
            headers: apiHeaders(),
            content: { 'application/json': { schema: ref('JobPage'), examples: JOB_PAGE_EXAMPLES } },
          },
          400: response('BadRequest'),
          ...authErrors(),
        },
      },
    },
    '/v1/jobs/{jobId}': {
      parameters: [param('JobId')],
      get: {
        operationId: 'getJob',
        tags: ['Jobs'],
        summary: 'Read a job',
        description:
          'The settled job (`succeeded` with `result`, `failed` with `error`, or `canceled` with the `canceled` error), or while it is unsettled the `processing` body with ' +
          '`Retry-After: 5`: poll again after that many seconds, never sooner. With `Prefer: wait=N` the request is held until the job ' +
          'settles or N seconds pass, and answered the moment it settles.',
        parameters: [param('Prefer'), principal],
        responses: {
          200: {
            description: 'The job (settled), or `processing` with `Retry-After`.',
            headers: { ...apiHeaders(), ...preferHeaders(), 'Retry-After': header('Retry-After-Processing') },
            content: { 'application/json': { schema: ref('Job'), examples: JOB_EXAMPLES } },
          },
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
    '/v1/jobs/{jobId}/cancel': {
      parameters: [param('JobId')],
      post: {
        operationId: 'cancelJob',
        tags: ['Jobs'],
        summary: 'Cancel a job that has not started',
        description:
          'Stops a job before it takes effect. Not itself a job: no body, no `Idempotency-Key`, answered at once. Needs the ' +
          'permission the mutation that queued the job needed (403 `forbidden` without it). A worker claims a job (in one statement that fails on a cancelled job) before it does ' +
          'anything, so **of a cancel and a worker racing, exactly one wins, whatever the timing, and the answer says which**: 200 ' +
          'with the job `canceled` (it never takes effect, `job.canceled` is emitted, requests waiting on it are answered at once: a ' +
          'mutation with 409 `canceled`, `GET /v1/jobs/{jobId}` with the cancelled job), or 409 `job_not_cancelable` (the worker ' +
          'won, or the job had already settled: read the job for its outcome). Cancelling a cancelled job answers the same 200 again. ' +
          'In `uat`, a submission with `externalRef` `sandbox:hold=<1..60>` stays unstarted that many seconds, to try this.',
        parameters: [principal],
        responses: {
          200: {
            description: 'The job is cancelled (now, or by an earlier cancel): `status: "canceled"` with the `canceled` error.',
            headers: apiHeaders(),
            content: { 'application/json': { schema: ref('JobCanceled'), examples: { canceled: JOB_EXAMPLES.canceled } } },
          },
          404: response('NotFound'),
          409: {
            description:
              '`job_not_cancelable`: the job has started or settled (succeeded or failed) and can no longer be cancelled. Read the job ' +
              '(`GET /v1/jobs/{jobId}`) for its outcome.',
            headers: apiHeaders(),
            content: json(ref('Error')),
          },
          ...authErrors(),
        },
      },
    },
    ...clearancePaths(),
    ...eventPaths({ apiHeaders, preferHeaders, param, response, json, authErrors }),
    ...productPaths({ apiHeaders, param, response, json, authErrors }),
    ...webhookPaths({ apiHeaders, param, response, json, authErrors, mutationResponses, mutationDescription: MUTATION_DESCRIPTION }),
    ...receiptPaths({ apiHeaders, baseHeaders, preferHeaders, param, response, json, authErrors }),
  };
}


const intro = (maxValues: number): string => `The partner-facing API for insurance business: read policies, create new-business submissions with attachments,
and follow the asynchronous jobs that carry out every mutation.

## Authentication
OAuth 2.0 client credentials: get a token from the token URL of the security scheme with this environment's access scope,
send it as \`Authorization: Bearer <token>\`, cache it and reuse it until shortly before \`expires_in\` runs out. Besides the
scope, each operation needs a permission provisioned to the client (403 \`forbidden\` without it); permissions are not listed
in this document. \`x-principal-id\` attributes a request to a principal registered for the partner.

## Mutations are jobs
Every mutation is queued as a job. Send a fresh \`Idempotency-Key\` and \`Prefer: wait=15\`. On 200 use the result. On 202 poll
\`statusUrl\` honouring \`Retry-After\` (5 s) until the job has \`succeeded\` or \`failed\` (or was \`canceled\`). After a dropped
connection resend the original request with the same key: it returns the same job and never creates a duplicate. Keys are kept
24 hours. A job that has not started can be cancelled (\`POST /v1/jobs/{jobId}/cancel\`): of a cancel and a worker racing, exactly
one wins, whatever the timing, and the answer says which.

## Errors
Every error is \`{"error": {"code", "message", "retryable", "details"?}}\`; a mutation whose job failed within the wait adds
\`jobId\`. Retry only when \`retryable\` is true, with backoff, and after \`Retry-After\` when it is given (429, 503). Any path not
listed here answers 404 \`not_found\` (after authentication: 401 without a token); a method a listed path does not allow answers
405 \`method_not_allowed\` with \`Allow\`, except OPTIONS, which answers 200 with \`Allow\` and no body. Every GET operation
also answers HEAD (the same status and headers, no body). Paths are matched exactly: one with a trailing \`/\` is an unknown
path (\`/v1/health/\` answers 404). Requests whose headers or body arrive too slowly are cut off with 408 and no body.

## JSON bodies
A JSON request body is at most 1 MiB (413 \`payload_too_large\`). It is refused with 400 \`invalid_json\`, the limit named in
\`message\`, before anything else is done with it, when it is not JSON (RFC 8259), nests arrays and objects deeper than
${MAX_JSON_DEPTH} levels, holds more than ${maxValues.toLocaleString('en-US')} values (numbers, strings, \`true\`, \`false\`, \`null\`, arrays and objects, the
body included), or repeats a key in an object (also when written with other escapes, \`"url"\` and \`"\\u0075rl"\`; \`details\`
names the key's path). Every string in it must be usable text (400 \`validation_error\` naming the field).

## Everything else
Every response carries \`X-Request-Id\`. Responses to authenticated requests carry the \`RateLimit-Policy\` and \`RateLimit\`
headers; over the limit the answer is 429 \`rate_limited\` with \`Retry-After\`. Timestamps are UTC with milliseconds, dates
\`YYYY-MM-DD\`, amounts decimal strings. The version is the path prefix \`/v1\`.

Error codes: ${ERROR_CODE_TABLE.map(([code]) => `\`${code}\``).join(', ')}.`;

/** The document for one environment. */
export function buildOpenApiDocument(opts: OpenApiOptions): Obj {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Partner Submission API',
      version: API_VERSION,
      summary: 'Policies, submissions with attachments, and the jobs that carry out every mutation.',
      description: intro(opts.jsonMaxValues ?? DEFAULT_MAX_JSON_VALUES),
      license: { name: 'Proprietary: for use by contracted partners only', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: opts.baseUrl, description: `The ${opts.environment} environment.` }],
    security: [{ [SECURITY_SCHEME]: [opts.scope] }],
    tags: [
      { name: 'Health', description: 'Who the credentials belong to.' },
      { name: 'Policies', description: "The partner's policies (read only)." },
      { name: 'Products', description: 'The product catalogue and what each product requires of a submission (machine-readable).' },
      { name: 'Submissions', description: 'New-business submissions; creating one is a job.' },
      { name: 'Attachments', description: 'Files attached to a submission; uploads and deletions are jobs.' },
      { name: 'Jobs', description: 'The asynchronous jobs that carry out every mutation.' },
      { name: 'Events', description: 'The event feed: what happened to the partner\'s resources, in order, with long-poll.' },
      { name: 'Receipts', description: 'Signed receipts: offline proof of what was received, and when, chained per partner.' },
      { name: 'Webhooks', description: 'Endpoints that receive the events as signed HTTP deliveries (Standard Webhooks), and their delivery log.' },
      { name: 'Reference', description: 'This document.' },
    ],
    paths: paths(),
    webhooks: webhookDeliveries(),
    components: components(opts),
  };
}
