// The error envelope's part of the OpenAPI document: the API's error table (code, HTTP status,
// retryable, meaning), made from the one in shared/domain/errors.ts, and the schemas of every error
// body (`Error`, and `JobFailedError` for a mutation whose job failed within the wait).
import { ERROR_CODES } from '@partner/shared/domain/errors';
import { ref, type Schema } from './schemas.js';

/** The API's error table (code, HTTP status, retryable, meaning), made from the one in shared/domain/errors.ts. */
export const ERROR_CODE_TABLE: readonly [code: string, status: number, retryable: boolean, meaning: string][] = Object.entries(ERROR_CODES).map(
  ([code, info]) => [code, info.http, info.retryable, info.meaning] as const,
);

const codeTable = ERROR_CODE_TABLE.map(([code, status, retryable, meaning]) => `| \`${code}\` | ${status} | ${retryable} | ${meaning} |`).join('\n');

export const errorSchemas: Record<string, Schema> = {
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
};
