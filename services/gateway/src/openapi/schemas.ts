// JSON Schemas (OpenAPI 3.1 = JSON Schema 2020-12) of every body the API sends or accepts, as
// components.schemas of the published document. The submission create schema is the very one the
// gateway validates requests with, so the reference cannot drift from the behaviour; the attachment
// media types and document types come from the gateway's own allowlists for the same reason.
import { ERROR_CODES } from '@partner/shared/domain/errors';
import { JOB_KINDS, JOB_STATUS_FILTERS } from '@partner/shared/domain/jobs';
import { POLICY_STATUSES } from '@partner/shared/domain/policies';
import { submissionCreateSchema } from '@partner/shared/domain/submission-rules';
import { ALLOWED_MEDIA_TYPES, DEFAULT_DOCUMENT_TYPE, DOCUMENT_TYPES } from '../attachments/media-types.js';
import { JOB_FAILURE_CODES } from '@partner/shared/domain/sandbox';
import { SUBMISSION_STATUS_NAMES } from '@partner/shared/domain/clearance';

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$';
const UUID_EXAMPLE = '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a71';
const JOB_EXAMPLE = 'job_0199a3e47c1d7b529a0e3f2d4c5b6a72';

/** The API's error table (code, HTTP status, retryable, meaning), made from the one in shared/errors.ts. */
export const ERROR_CODE_TABLE: readonly [code: string, status: number, retryable: boolean, meaning: string][] = Object.entries(ERROR_CODES).map(
  ([code, info]) => [code, info.http, info.retryable, info.meaning] as const,
);

const codeTable = ERROR_CODE_TABLE.map(([code, status, retryable, meaning]) => `| \`${code}\` | ${status} | ${retryable} | ${meaning} |`).join('\n');

const submissionCreate = submissionCreateSchema;

export const schemas: Record<string, Schema> = {
  ErrorDetail: {
    type: 'object',
    description: 'One problem with the request: the field (body field path such as `applicant.legalName`, query parameter or header name) and what is wrong with it.',
    additionalProperties: false,
    required: ['field', 'issue'],
    properties: {
      field: { type: 'string', examples: ['applicant.legalName'] },
      issue: { type: 'string', examples: ['must NOT have fewer than 1 characters'] },
      code: { type: 'string', description: 'With `requirements_not_met`: what kind of problem (`required`, `out_of_window`, `max_reached`, `media_type_not_allowed`, `too_large`, …).', examples: ['required'] },
    },
  },
  ErrorObject: {
    type: 'object',
    description:
      'The error envelope: the same object a failed job carries in `error`. `retryable` tells whether sending the same request ' +
      'again can succeed. Codes (a failed job may carry other codes; treat unknown ones by `retryable`):\n\n' +
      '| code | HTTP status | retryable | when |\n|---|---|---|---|\n' +
      codeTable,
    additionalProperties: false,
    required: ['code', 'message', 'retryable'],
    properties: {
      code: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', examples: ['validation_error'] },
      message: { type: 'string', description: 'Human-readable explanation; never contains internals.', examples: ['the request body is invalid; see details'] },
      retryable: { type: 'boolean' },
      details: {
        type: 'array',
        description: 'Present for `validation_error` (every failing field or parameter) and `requirements_not_met` (every field that breaks the product\'s requirements).',
        items: ref('ErrorDetail'),
      },
    },
  },
  Error: {
    type: 'object',
    description: 'Body of every error response.',
    additionalProperties: false,
    required: ['error'],
    properties: { error: ref('ErrorObject') },
  },
  JobFailedError: {
    type: 'object',
    description:
      "A mutation whose job failed within the `Prefer: wait`: the job's error as the HTTP error, with the job's id beside it. " +
      'The status follows the code (422 for business rules such as `unknown_product`, 409 `conflict`, 409 `canceled` for a job its ' +
      'partner cancelled, 503 when retryable, ' +
      'otherwise the status of the code table or 422). The same key replays the same failed job; use a new `Idempotency-Key` to try again.',
    additionalProperties: false,
    required: ['error', 'jobId'],
    properties: { error: ref('ErrorObject'), jobId: ref('JobId') },
  },
  MutationError: {
    description: 'An error before any job was created (`Error`), or the error of the job the request created or replayed (`JobFailedError`).',
    oneOf: [ref('Error'), ref('JobFailedError')],
  },
  Uuid: { type: 'string', format: 'uuid', examples: [UUID_EXAMPLE] },
  JobId: { type: 'string', pattern: '^job_[0-9a-f]{32}$', description: 'Job handle: `job_` and 32 lowercase hex characters.', examples: [JOB_EXAMPLE] },
  Timestamp: {
    type: 'string',
    format: 'date-time',
    pattern: TIMESTAMP_PATTERN,
    description: 'RFC 3339 UTC timestamp with milliseconds.',
    examples: ['2026-11-21T12:00:08.012Z'],
  },
  Date: { type: 'string', format: 'date', description: 'Calendar date `YYYY-MM-DD`.', examples: ['2027-01-01'] },
  Health: {
    type: 'object',
    additionalProperties: false,
    required: ['status', 'tenant', 'partnerId', 'principalId'],
    properties: {
      status: { const: 'ok' },
      tenant: { type: 'string', description: 'Account the credentials are bound to.' },
      partnerId: { type: 'string', description: 'Partner the credentials are bound to.' },
      principalId: {
        type: ['string', 'null'],
        description: 'The principal the request was attributed to with `x-principal-id`; null without that header.',
      },
    },
  },
  SubmissionCreate: {
    ...submissionCreate,
    description:
      'A new-business submission. All five fields are required and unknown fields anywhere are refused (`validation_error`, ' +
      'each listed in `details`). In the `uat` environment an `externalRef` of `sandbox:delay=<1..60>` makes the job take that many ' +
      'seconds, `sandbox:fail=<code>` makes it fail with that code (status and `retryable` as the error table says), and ' +
      '`sandbox:delay=<n>;fail=<code>` does both. `<code>` is one of ' + JOB_FAILURE_CODES.map((c) => '`' + c + '`').join(', ') + '. ' +
      '`sandbox:hold=<1..60>` keeps the job `accepted` (not started) that many seconds, so `POST /v1/jobs/{jobId}/cancel` can be tried; ' +
      'it combines with the others (`sandbox:hold=10;fail=conflict`). ' +
      'Any other value beginning with `sandbox:` (any case, surrounding spaces ignored) is a `validation_error` naming `externalRef`.',
    properties: {
      ...submissionCreate.properties,
      externalRef: { ...submissionCreate.properties.externalRef, description: "Caller's own reference for the intake, 1–200 characters.", examples: ['broker-ref-001'] },
      submissionType: { ...submissionCreate.properties.submissionType, description: 'Kind of submission; only `application`.' },
      effectiveDate: { ...submissionCreate.properties.effectiveDate, description: 'A real calendar date `YYYY-MM-DD` (`2027-02-29` is refused).', examples: ['2027-01-01'] },
      productId: {
        ...submissionCreate.properties.productId,
        description:
          'A product of the catalogue (UUID, compared case-insensitively). An unknown or inactive product fails the job with `unknown_product`. ' +
          'A product may require more than this schema (applicant fields, an effective-date window): see `GET /v1/products/{productId}/requirements`; ' +
          'a body that breaks them fails the job with `requirements_not_met`. `POST /v1/submissions/validate` checks a body without creating anything.',
        examples: [UUID_EXAMPLE],
      },
      applicant: {
        ...submissionCreate.properties.applicant,
        properties: {
          legalName: {
            ...submissionCreate.properties.applicant.properties.legalName,
            description: "Applicant's legal name, 1–200 characters with at least one that is not white space.",
            examples: ['Acme Holdings LLC'],
          },
          taxId: {
            ...submissionCreate.properties.applicant.properties.taxId,
            description: "The applicant's US FEIN, `NN-NNNNNNN` or 9 digits; stored and returned as 9 digits. Optional unless the product's requirements say so.",
            examples: ['12-3456789'],
          },
          address: {
            ...submissionCreate.properties.applicant.properties.address,
            description: "The applicant's address; every string 1–200 characters, `line2` optional, `country` ISO 3166-1 alpha-2. Optional unless the product's requirements say so.",
            examples: [{ line1: '1 Main Street', city: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' }],
          },
        },
      },
    },
  },
  SubmissionResult: {
    type: 'object',
    description: 'The result of a submission job: returned inline (200) when it settles within the wait, and as the `result` of the succeeded job.',
    additionalProperties: false,
    required: ['submissionId', 'submissionName', 'status', 'clearance'],
    properties: {
      submissionId: ref('Uuid'),
      submissionName: { type: 'string', description: 'The legal name, trimmed, inner white space collapsed.', examples: ['Acme Holdings LLC'] },
      status: { type: 'string', enum: ['submitted'] },
      clearance: ref('Clearance'),
      receipt: ref('ReceiptJws'),
    },
  },
  Applicant: {
    type: 'object',
    description: 'The applicant as stored: `taxId` (9 digits) and `address` appear only when the create gave them.',
    additionalProperties: false,
    required: ['legalName'],
    properties: {
      legalName: { type: 'string', examples: ['Acme Holdings LLC'] },
      taxId: { type: 'string', pattern: '^[0-9]{9}$', description: 'US FEIN, 9 digits.', examples: ['123456789'] },
      address: ref('Address'),
    },
  },
  Address: {
    type: 'object',
    additionalProperties: false,
    required: ['line1', 'city', 'region', 'postalCode', 'country'],
    properties: {
      line1: { type: 'string', examples: ['1 Main Street'] },
      line2: { type: 'string', examples: ['Suite 200'] },
      city: { type: 'string', examples: ['Springfield'] },
      region: { type: 'string', examples: ['IL'] },
      postalCode: { type: 'string', examples: ['62701'] },
      country: { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2.', examples: ['US'] },
    },
  },
  Submission: {
    type: 'object',
    additionalProperties: false,
    required: [
      'submissionId',
      'submissionName',
      'status',
      'externalRef',
      'submissionType',
      'effectiveDate',
      'productId',
      'applicant',
      'principalId',
      'createdAt',
      'updatedAt',
      'requirements',
      'clearance',
    ],
    properties: {
      submissionId: ref('Uuid'),
      submissionName: { type: 'string' },
      status: { type: 'string', enum: [...SUBMISSION_STATUS_NAMES], description: '`submitted`, or `withdrawn` once its partner withdrew it.' },
      externalRef: { type: 'string' },
      submissionType: { type: 'string', enum: ['application'] },
      effectiveDate: ref('Date'),
      productId: ref('Uuid'),
      applicant: ref('Applicant'),
      principalId: { type: ['string', 'null'], description: 'The principal the creating request was attributed to, or null.' },
      createdAt: ref('Timestamp'),
      updatedAt: ref('Timestamp'),
      requirements: ref('SubmissionRequirements'),
      clearance: ref('Clearance'),
      withdrawal: ref('Withdrawal'),
    },
  },
  JobHandle: {
    type: 'object',
    description: 'A mutation accepted as a job that has not settled (yet). Poll `statusUrl`, honouring `Retry-After`.',
    additionalProperties: false,
    required: ['id', 'status', 'statusUrl'],
    properties: {
      id: ref('JobId'),
      status: { const: 'accepted', description: 'Always `accepted`, even for a replay of a job that has progressed; read the job at `statusUrl`.' },
      statusUrl: { type: 'string', format: 'uri', description: 'Absolute URL of `GET /v1/jobs/{id}` for this job.' },
    },
  },
  JobProcessing: {
    type: 'object',
    description: 'The job has not settled: poll again after `retryAfter` seconds (the `Retry-After` header says the same).',
    additionalProperties: false,
    required: ['id', 'status', 'retryAfter'],
    properties: {
      id: ref('JobId'),
      status: { const: 'processing' },
      retryAfter: { type: 'integer', minimum: 1, examples: [5] },
    },
  },
  JobSucceeded: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'kind', 'status', 'result', 'createdAt', 'updatedAt'],
    properties: {
      id: ref('JobId'),
      kind: ref('JobKind'),
      status: { const: 'succeeded' },
      result: ref('JobResult'),
      createdAt: ref('Timestamp'),
      updatedAt: ref('Timestamp'),
    },
  },
  JobFailed: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'kind', 'status', 'error', 'createdAt', 'updatedAt'],
    properties: {
      id: ref('JobId'),
      kind: ref('JobKind'),
      status: { const: 'failed' },
      error: ref('ErrorObject'),
      createdAt: ref('Timestamp'),
      updatedAt: ref('Timestamp'),
    },
  },
  JobCanceled: {
    type: 'object',
    description:
      'A job its partner cancelled before it started (`POST /v1/jobs/{jobId}/cancel`): settled, it never takes effect. `error` is ' +
      'always `{code: "canceled", retryable: false}`; a request that was waiting on the mutation was answered with it (409 `canceled`).',
    additionalProperties: false,
    required: ['id', 'kind', 'status', 'error', 'createdAt', 'updatedAt'],
    properties: {
      id: ref('JobId'),
      kind: ref('JobKind'),
      status: { const: 'canceled' },
      error: {
        type: 'object',
        description: 'The error every cancelled job carries (an `ErrorObject` with code `canceled`).',
        additionalProperties: false,
        required: ['code', 'message', 'retryable'],
        properties: {
          code: { const: 'canceled' },
          message: { type: 'string', examples: ['the job was cancelled by its partner before it started'] },
          retryable: { const: false },
        },
      },
      createdAt: ref('Timestamp'),
      updatedAt: ref('Timestamp'),
    },
  },
  Job: {
    description:
      'A job as `GET /v1/jobs/{id}` shows it: settled (`succeeded` with `result`, `failed` with `error`, or `canceled` with the ' +
      '`canceled` error), or the `processing` body while it is accepted or running.',
    oneOf: [ref('JobSucceeded'), ref('JobFailed'), ref('JobCanceled'), ref('JobProcessing')],
    discriminator: {
      propertyName: 'status',
      mapping: {
        succeeded: '#/components/schemas/JobSucceeded',
        failed: '#/components/schemas/JobFailed',
        canceled: '#/components/schemas/JobCanceled',
        processing: '#/components/schemas/JobProcessing',
      },
    },
  },
  JobKind: {
    type: 'string',
    enum: [...Object.values(JOB_KINDS)],
    description: 'What the job does: the mutation that queued it. New kinds may be added within `/v1`.',
    examples: ['submission.create'],
  },
  JobStatusFilter: {
    type: 'string',
    enum: [...JOB_STATUS_FILTERS],
    description: 'A job list filter: `processing` (not settled yet: accepted or running), `succeeded`, `failed` or `canceled`.',
  },
  JobListProcessing: {
    type: 'object',
    description: 'An unsettled job (accepted or running) as the job list shows it.',
    additionalProperties: false,
    required: ['id', 'kind', 'status', 'createdAt', 'updatedAt'],
    properties: {
      id: ref('JobId'),
      kind: ref('JobKind'),
      status: { const: 'processing' },
      createdAt: ref('Timestamp'),
      updatedAt: ref('Timestamp'),
    },
  },
  JobListItem: {
    description: 'A job in the list: settled exactly as `GET /v1/jobs/{id}` shows it, or `processing` with its times.',
    oneOf: [ref('JobSucceeded'), ref('JobFailed'), ref('JobCanceled'), ref('JobListProcessing')],
    discriminator: {
      propertyName: 'status',
      mapping: {
        succeeded: '#/components/schemas/JobSucceeded',
        failed: '#/components/schemas/JobFailed',
        canceled: '#/components/schemas/JobCanceled',
        processing: '#/components/schemas/JobListProcessing',
      },
    },
  },
  JobPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('JobListItem') },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` (with the same filters) for the next page; null on the last page.' },
    },
  },
  SubmissionPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('Submission') },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` (with the same filters) for the next page; null on the last page.' },
    },
  },
  JobResult: {
    description:
      "What the job's mutation returned: a submission result, an attachment record or deletion, or a webhook endpoint, its deletion, " +
      'a secret rotation (never the secret), a recovery or a ping.',
    oneOf: [
      ref('SubmissionResult'),
      ref('Submission'),
      ref('Attachment'),
      ref('AttachmentDeleted'),
      ref('WebhookEndpoint'),
      ref('WebhookEndpointDeleted'),
      ref('WebhookSecretRotated'),
      ref('WebhookRecovered'),
      ref('WebhookPinged'),
    ],
  },
  Money: {
    type: 'object',
    additionalProperties: false,
    examples: [{ amount: '1999.99', currency: 'GBP' }],
    required: ['amount', 'currency'],
    properties: {
      amount: { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$', description: 'Decimal amount as a string, never a number.', examples: ['1999.99'] },
      currency: { type: 'string', description: 'ISO 4217 currency code.', examples: ['GBP'] },
    },
  },
  PolicyStatus: { type: 'string', enum: [...POLICY_STATUSES] },
  Policy: {
    type: 'object',
    additionalProperties: false,
    required: ['policyId', 'policyNumber', 'status', 'productId', 'insured', 'effectiveDate', 'expirationDate', 'premium', 'createdAt', 'updatedAt'],
    properties: {
      policyId: ref('Uuid'),
      policyNumber: { type: 'string', examples: ['DEMO-POL-0006'] },
      status: ref('PolicyStatus'),
      productId: ref('Uuid'),
      insured: {
        type: 'object',
        additionalProperties: false,
        required: ['legalName'],
        properties: { legalName: { type: 'string', examples: ['Woodgrove Dental Practice'] } },
      },
      effectiveDate: ref('Date'),
      expirationDate: ref('Date'),
      premium: ref('Money'),
      submissionId: { ...ref('Uuid'), description: 'Present only when the policy came from a submission.' },
      createdAt: ref('Timestamp'),
      updatedAt: ref('Timestamp'),
    },
  },
  PolicyPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('Policy') },
      nextCursor: {
        type: ['string', 'null'],
        description: 'Pass as `cursor` (with the same filters) for the next page; null on the last page.',
      },
    },
  },
  DocumentType: {
    type: 'string',
    enum: [...DOCUMENT_TYPES],
    description: `Kind of insurance document; \`${DEFAULT_DOCUMENT_TYPE}\` when not given.`,
  },
  AttachmentUpload: {
    type: 'object',
    description:
      'The upload form: a `file` part (with a filename) and an optional `documentType` field. Allowed file types: ' +
      `${Object.keys(ALLOWED_MEDIA_TYPES).join(', ')} (a part sent as \`application/octet-stream\` is typed by its file extension).`,
    additionalProperties: false,
    required: ['file'],
    properties: {
      file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The file. Must not be empty.' },
      documentType: ref('DocumentType'),
    },
  },
  Attachment: {
    type: 'object',
    additionalProperties: false,
    required: ['attachmentId', 'submissionId', 'fileName', 'contentType', 'sizeBytes', 'sha256', 'documentType', 'createdAt'],
    properties: {
      attachmentId: ref('Uuid'),
      submissionId: ref('Uuid'),
      fileName: {
        type: 'string',
        minLength: 1,
        description: 'The uploaded name made safe: no path, no control characters or quotes, at most 255 UTF-8 bytes.',
        examples: ['loss-runs-2025.pdf'],
      },
      contentType: { type: 'string', enum: Object.keys(ALLOWED_MEDIA_TYPES), description: 'Media type the file is stored and served with.' },
      sizeBytes: { type: 'integer', minimum: 1 },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Lowercase hex SHA-256 of the bytes (also the content ETag).' },
      documentType: ref('DocumentType'),
      createdAt: ref('Timestamp'),
      receipt: { ...ref('ReceiptJws'), description: "In an attachment.create job's result only: the attachment's signed receipt." },
    },
  },
  AttachmentPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('Attachment') },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last page.' },
    },
  },
  AttachmentDeleted: {
    type: 'object',
    additionalProperties: false,
    required: ['attachmentId', 'deleted'],
    properties: { attachmentId: ref('Uuid'), deleted: { const: true } },
  },
};
