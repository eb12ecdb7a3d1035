// The request log's part of the OpenAPI document (GET /v1/requests, GET /v1/requests/{requestLogId}):
// its paths and schemas, with examples.
import { REQUEST_LOG_BODY_LIMIT_BYTES, REQUEST_LOG_HEADERS, REQUEST_LOG_METHODS } from '@partner/shared/domain/request-log';
import { apiHeaders, authErrors, LIST_400, param, response, timestampParam, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';

const EXAMPLE_ID = 'req_019ab0e47c1d7b529a0e3f2d4c5b6a72';
const EXAMPLE_KEY = '2f1c9a52-8d7e-4c11-b1a4-5f3e9d7c6b21';
const EXAMPLE_JOB_ID = 'job_019ab0e47c1e7c639b1f4e3e5d6c7b83';

const EXAMPLE_ITEM = {
  id: EXAMPLE_ID,
  requestId: 'acme-7f3a9c',
  method: 'POST',
  path: '/v1/submissions',
  query: null,
  status: 200,
  durationMs: 41.7,
  clientId: 'cli_7Hq2mX9pLr4TbWz1',
  principalId: 'demo-broker',
  idempotencyKey: EXAMPLE_KEY,
  idempotentReplayed: false,
  jobId: EXAMPLE_JOB_ID,
  errorCode: null,
  createdAt: '2026-11-27T09:14:03.120Z',
};
const EXAMPLE_REPLAY = {
  ...EXAMPLE_ITEM,
  id: 'req_019ab0e4a2337c11a4be2a1f0d9c8e55',
  requestId: 'acme-7f3a9d',
  durationMs: 6.2,
  idempotentReplayed: true,
  createdAt: '2026-11-27T09:14:12.851Z',
};
const EXAMPLE_ERROR = {
  ...EXAMPLE_ITEM,
  id: 'req_019ab0e3f0017a42b3cd4e5f60718293',
  requestId: 'c0a5f2de-44b1-4d7e-9a8e-2f3b4c5d6e7f',
  status: 400,
  durationMs: 2.3,
  idempotencyKey: null,
  jobId: null,
  errorCode: 'validation_error',
  createdAt: '2026-11-27T09:13:40.002Z',
};

const EXAMPLE_DETAIL = {
  ...EXAMPLE_ITEM,
  requestHeaders: {
    'content-type': 'application/json',
    prefer: 'wait=15',
    'idempotency-key': EXAMPLE_KEY,
    'x-principal-id': 'demo-broker',
    'user-agent': 'acme-integration/2.3.1',
    'x-request-id': 'acme-7f3a9c',
  },
  requestBody: {
    productId: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b',
    applicant: { name: 'Acme Logistics LLC', taxId: '****6789' },
    effectiveDate: '2026-12-01',
  },
  requestBodyTruncated: false,
  requestBodySizeBytes: 142,
  responseBody: {
    id: '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a70',
    status: 'received',
    productId: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b',
    applicant: { name: 'Acme Logistics LLC', taxId: '****6789' },
    effectiveDate: '2026-12-01',
  },
  responseBodyTruncated: false,
  responseBodySizeBytes: 231,
};

const EXAMPLE_UPLOAD = {
  ...EXAMPLE_ITEM,
  id: 'req_019ab0e52b117d01a2b3c4d5e6f70819',
  path: '/v1/submissions/0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a70/attachments',
  status: 202,
  requestHeaders: { 'content-type': 'multipart/form-data; boundary=----acme', 'idempotency-key': 'upload-41', 'user-agent': 'acme-integration/2.3.1' },
  requestBody: { fileName: 'loss-runs.pdf', contentType: 'application/pdf', sizeBytes: 52113, sha256: '9f2c1b5e7a4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b' },
  requestBodyTruncated: false,
  requestBodySizeBytes: 52480,
  responseBody: { jobId: EXAMPLE_JOB_ID, status: 'accepted', statusUrl: `https://api.example.com/v1/jobs/${EXAMPLE_JOB_ID}` },
  responseBodyTruncated: false,
  responseBodySizeBytes: null,
};

const nullable = (schema: Schema, description: string): Schema => ({ description, anyOf: [schema, { type: 'null' }] });
const nullableString = (description: string, examples?: unknown[]): Schema => ({ type: ['string', 'null'], description, ...(examples ? { examples } : {}) });

const ITEM_PROPERTIES: Record<string, Schema> = {
  id: ref('RequestLogId'),
  requestId: { type: 'string', description: 'The request\'s `X-Request-Id`: the one it sent (when sane), or the one the API gave it.', examples: ['acme-7f3a9c'] },
  method: { type: 'string', enum: [...REQUEST_LOG_METHODS], examples: ['POST'] },
  path: { type: 'string', description: 'The path as requested, without the query string.', examples: ['/v1/submissions'] },
  query: nullableString('The query string as requested, without `?`; null when there was none.', ['status=failed&limit=20']),
  status: { type: 'integer', minimum: 100, maximum: 599, description: 'The HTTP status of the answer.', examples: [200] },
  durationMs: { type: 'number', minimum: 0, description: 'Time to answer, in milliseconds (with any `Prefer: wait`).', examples: [41.7] },
  clientId: { type: 'string', description: 'The client whose token made the request.', examples: ['cli_7Hq2mX9pLr4TbWz1'] },
  principalId: nullableString('Its `X-Principal-Id`, when it acted for a principal.', ['demo-broker']),
  idempotencyKey: nullableString('Its `Idempotency-Key`, when it sent one: filter by it to find a request and its replays.', [EXAMPLE_KEY]),
  idempotentReplayed: { type: 'boolean', description: 'True when the answer was a replay of an earlier request with the same key (`Idempotent-Replayed: true`).' },
  jobId: nullable(ref('JobId'), 'The job the request queued or replayed (its `Job-Id`), or the job it read.'),
  errorCode: nullableString('The error code of an error answer (`error.code`).', ['validation_error']),
  createdAt: { ...ref('Timestamp'), description: 'When the request was received.' } as Schema,
};
const ITEM_REQUIRED = Object.keys(ITEM_PROPERTIES);

const BODY_DESCRIPTION =
  `The JSON as sent or answered, redacted: every \`secret\` field removed at any depth, \`applicant.taxId\` (and every other tax id) ` +
  `masked to its last four digits; a multipart upload as its file \`{fileName, contentType, sizeBytes, sha256}\`; null when there ` +
  `was no body or it was not JSON (its size is in the \`…SizeBytes\` field). At most ${REQUEST_LOG_BODY_LIMIT_BYTES / 1024} KiB: a longer body is ` +
  `the first ${REQUEST_LOG_BODY_LIMIT_BYTES} bytes of its redacted JSON text, as a string, with the \`…Truncated\` flag set.`;

export const requestSchemas: Readonly<Record<string, Schema>> = {
  RequestLogId: { type: 'string', pattern: '^req_[0-9a-f]{32}$', description: 'Request log entry id: `req_` and 32 lowercase hex characters.', examples: [EXAMPLE_ID] },
  RequestLogItem: {
    type: 'object',
    description: 'A request of the partner\'s integration as the log keeps it (absent values are null).',
    additionalProperties: false,
    required: ITEM_REQUIRED,
    properties: ITEM_PROPERTIES,
  },
  RequestLogEntry: {
    type: 'object',
    description: 'A request with its allow-listed headers and redacted bodies.',
    additionalProperties: false,
    required: [...ITEM_REQUIRED, 'requestHeaders', 'requestBody', 'requestBodyTruncated', 'requestBodySizeBytes', 'responseBody', 'responseBodyTruncated', 'responseBodySizeBytes'],
    properties: {
      ...ITEM_PROPERTIES,
      requestHeaders: {
        type: 'object',
        description: `The request's headers, keyed by lower-case name, holding only ${REQUEST_LOG_HEADERS.map((h) => `\`${h}\``).join(', ')} (never \`Authorization\` or cookies).`,
        additionalProperties: false,
        properties: Object.fromEntries(REQUEST_LOG_HEADERS.map((h) => [h, { type: 'string' }])),
      },
      requestBody: { description: BODY_DESCRIPTION },
      requestBodyTruncated: { type: 'boolean', description: `True when the request body was longer than ${REQUEST_LOG_BODY_LIMIT_BYTES / 1024} KiB once redacted (\`requestBody\` is then its beginning, as a string).` },
      requestBodySizeBytes: { type: ['integer', 'null'], minimum: 0, description: 'Size of the request body as received, in bytes; null when it had none.' },
      responseBody: { description: BODY_DESCRIPTION },
      responseBodyTruncated: { type: 'boolean', description: `True when the response body was longer than ${REQUEST_LOG_BODY_LIMIT_BYTES / 1024} KiB once redacted.` },
      responseBodySizeBytes: { type: ['integer', 'null'], minimum: 0, description: 'Size of the response body in bytes (of its JSON text when it was JSON); null when it had none.' },
    },
  },
  RequestLogPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('RequestLogItem') },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` (with the same filters) for the next page; null on the last page.' },
    },
  },
};

export function requestPaths(): Obj {
  const principal = param('PrincipalId');
  return {
    '/v1/requests': {
      get: {
        operationId: 'listRequests',
        tags: ['Requests'],
        summary: 'List the requests your integration sent',
        description:
          'The calling partner\'s requests under `/v1` (every authenticated one, except `/v1/openapi.json` and these reads), newest ' +
          'first (by `createdAt`, then `id`), as they were answered: a request appears within 5 seconds of its answer and is kept 30 ' +
          'days. Find a request and its replays by `idempotencyKey`, one request by the `X-Request-Id` it sent (`requestId`), the ' +
          'failures by `status=4xx`. Logging is best effort: a request is never failed or slowed by it, and one that could not be ' +
          'logged is missing. ' +
          LIST_400,
        parameters: [
          param('Limit'),
          param('Cursor'),
          {
            name: 'status',
            in: 'query',
            description: 'Only answers of this status: a class (`2xx`, `4xx`, `5xx`) or an exact code (`409`).',
            schema: { type: 'string', pattern: '^(?:[245]xx|[1-5][0-9]{2})$', examples: ['4xx', '409'] },
          },
          { name: 'method', in: 'query', description: 'Only requests of this method.', schema: { type: 'string', enum: [...REQUEST_LOG_METHODS] } },
          { name: 'pathPrefix', in: 'query', description: 'Only requests whose path starts with this (e.g. `/v1/submissions`).', schema: { type: 'string', pattern: '^/', maxLength: 512, examples: ['/v1/submissions'] } },
          { name: 'idempotencyKey', in: 'query', description: 'Only requests sent with this `Idempotency-Key` (a request and its replays).', schema: { type: 'string', maxLength: 512, examples: [EXAMPLE_KEY] } },
          { name: 'requestId', in: 'query', description: 'Only the request(s) with this `X-Request-Id`.', schema: { type: 'string', maxLength: 512, examples: ['acme-7f3a9c'] } },
          { name: 'jobId', in: 'query', description: 'Only requests that queued, replayed or read this job.', schema: { type: 'string', maxLength: 512, examples: [EXAMPLE_JOB_ID] } },
          timestampParam('createdSince', 'Only requests received at or after this'),
          timestampParam('createdBefore', 'Only requests received before this'),
          principal,
        ],
        responses: {
          200: {
            description: 'One page of requests.',
            headers: apiHeaders(),
            content: {
              'application/json': {
                schema: ref('RequestLogPage'),
                examples: {
                  replay: { summary: 'A submission and its replay (`?idempotencyKey=…`)', value: { items: [EXAMPLE_REPLAY, EXAMPLE_ITEM], nextCursor: null } },
                  failures: {
                    summary: 'The failures (`?status=4xx`); more pages follow',
                    value: { items: [EXAMPLE_ERROR], nextCursor: 'AQAAAZqw5HwAAZqw5Hwde1KaDj8tTFtqcWOlLwNsNk6g1u1Vh9Hrkg4' },
                  },
                  last: { summary: 'The last page', value: { items: [], nextCursor: null } },
                },
              },
            },
          },
          400: response('BadRequest'),
          ...authErrors(),
        },
      },
    },
    '/v1/requests/{requestLogId}': {
      parameters: [{ name: 'requestLogId', in: 'path', required: true, description: 'The request log entry id (`id` of the list).', schema: ref('RequestLogId') }],
      get: {
        operationId: 'getRequest',
        tags: ['Requests'],
        summary: 'Read a request with its headers and bodies',
        description:
          'One request of the log with its allow-listed headers and its request and response bodies, redacted (no `Authorization`, ' +
          'cookies, secrets or attachment bytes; tax ids masked to their last four digits). Another partner\'s request is 404.',
        parameters: [principal],
        responses: {
          200: {
            description: 'The request.',
            headers: apiHeaders(),
            content: {
              'application/json': {
                schema: ref('RequestLogEntry'),
                examples: {
                  submission: { summary: 'A submission created under Prefer: wait', value: EXAMPLE_DETAIL },
                  upload: { summary: 'An attachment upload: its file, never its bytes', value: EXAMPLE_UPLOAD },
                },
              },
            },
          },
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
  };
}
