// The pieces the OpenAPI document's operations are built from (document.ts and every resource's
// openapi.ts): references to the shared components, the headers every answer carries, and the
// responses and descriptions every mutation, list and authenticated operation shares.
import { ref, type Schema } from './schemas.js';

export type Obj = Record<string, unknown>;

export const header = (name: string): Obj => ({ $ref: `#/components/headers/${name}` });
export const param = (name: string): Obj => ({ $ref: `#/components/parameters/${name}` });
export const response = (name: string): Obj => ({ $ref: `#/components/responses/${name}` });
export const json = (schema: Schema): Obj => ({ 'application/json': { schema } });

/** Headers every API response carries. */
export const baseHeaders = (): Obj => ({
  'X-Request-Id': header('X-Request-Id'),
  'Cache-Control': header('Cache-Control'),
  'X-Content-Type-Options': header('X-Content-Type-Options'),
});

/** Headers of responses to authenticated requests (the rate limit is applied after authentication). */
export const apiHeaders = (): Obj => ({
  ...baseHeaders(),
  'RateLimit-Policy': header('RateLimit-Policy'),
  RateLimit: header('RateLimit'),
});

/** Response headers of a request that sent or could send Prefer. */
export const preferHeaders = (): Obj => ({
  'Preference-Applied': header('Preference-Applied'),
  Vary: header('Vary'),
});

const ERROR_HEADERS = {
  400: {},
  404: {},
  409: {},
  413: {},
  415: {},
  422: {},
  500: {},
  403: { 'WWW-Authenticate': header('WWW-Authenticate-Optional') },
  503: { 'Retry-After': header('Retry-After') },
} as const;

const MUTATION_ERRORS: Record<number, string> = {
  400: '`invalid_json` or `validation_error` (body, form field or `Idempotency-Key`; `details` lists every problem); nothing was queued. Or the job failed with a code of status 400.',
  403: '`forbidden`, `principal_not_registered` or `insufficient_scope` (see the `Forbidden` response); or the job failed with `forbidden`.',
  404: '`not_found`: the submission (or attachment) does not exist or belongs to another partner. Or the job failed with `not_found`.',
  409: '`conflict`: the job failed because the change conflicts with the current state. Or `not_withdrawable`: the submission is withdrawn (withdrawing it again, or adding an attachment to it). Or `canceled`: the job was cancelled (`POST /v1/jobs/{jobId}/cancel`) before it started; it never takes effect.',
  413: '`payload_too_large`: the body is over the size limit.',
  415: '`unsupported_media_type`: wrong `Content-Type`.',
  422: '`idempotency_key_reused` (the key was used with a different request), or the job failed with a business-rule error such as `unknown_product` or `requirements_not_met` (`details` names each failing field; non-retryable, with `jobId`).',
  500: '`internal` (retryable), or the job failed with it.',
  503: '`unavailable` (retryable, with `Retry-After`): a dependency was unavailable; or the job failed with a retryable error (with `jobId`). Resend with the same `Idempotency-Key` when there is no `jobId`; with a `jobId`, the job failed: use a new key.',
};

/** An error response of a mutation: the plain envelope, or a failed job's error with jobId. */
function mutationError(status: keyof typeof ERROR_HEADERS, description = MUTATION_ERRORS[status] ?? ''): Obj {
  return { description, headers: { ...apiHeaders(), ...ERROR_HEADERS[status] }, content: json(ref('MutationError')) };
}

/** Errors every authenticated operation can answer (400: a query parameter that is not usable text). */
export const authErrors = (): Obj => ({
  400: response('BadRequest'),
  401: response('Unauthenticated'),
  403: response('Forbidden'),
  429: response('RateLimited'),
  500: response('Internal'),
  503: response('Unavailable'),
});

/** 200/202 of a mutation: the settled result, or the job handle. */
export function mutationResponses(resultSchema: Schema, resultDescription: string, extra: number[]): Obj {
  const errors: Obj = {};
  for (const status of [400, 403, 404, 409, 422, 500, 503, ...extra].sort((a, b) => a - b)) {
    errors[status] = mutationError(status as keyof typeof ERROR_HEADERS);
  }
  return {
    200: {
      description: `${resultDescription} The job settled successfully within \`Prefer: wait\`.`,
      headers: { ...apiHeaders(), ...preferHeaders(), 'Idempotent-Replayed': header('Idempotent-Replayed'), 'Job-Id': header('Job-Id') },
      content: json(resultSchema),
    },
    202: {
      description:
        'Accepted as a job that has not settled (yet): without `Prefer: wait`, or when the wait ran out. Poll `statusUrl` ' +
        '(also in `Location`) after `Retry-After` seconds.',
      headers: {
        ...apiHeaders(),
        ...preferHeaders(),
        'Idempotent-Replayed': header('Idempotent-Replayed'),
        'Job-Id': header('Job-Id'),
        Location: header('Location'),
        'Retry-After': header('Retry-After'),
      },
      content: json(ref('JobHandle')),
    },
    ...authErrors(),
    ...errors,
  };
}

export const MUTATION_DESCRIPTION =
  'Runs as a job. Send a fresh `Idempotency-Key` and `Prefer: wait=15`: on 200 use the result; on 202 poll `statusUrl` ' +
  'honouring `Retry-After` until the job has succeeded or failed; after a dropped connection resend the same request with ' +
  'the same key (it returns the same job and never creates a duplicate). If the job fails within the wait, the response is ' +
  "the job's error with `jobId`. Request validation happens before any job exists (400, nothing queued).";

export const LIST_400 =
  'Another partner\'s items never appear. An unknown or repeated parameter, an out-of-range `limit`, a bad filter value, or a cursor ' +
  'that is garbled or was issued to another partner or for other filters is 400 `validation_error` naming every bad parameter in `details`.';

/** A timestamp filter of a list. */
export const timestampParam = (name: string, what: string): Obj => ({
  name,
  in: 'query',
  description: `${what} RFC 3339 timestamp (with a time zone, years 0001-9999; write \`+\` as \`%2B\`).`,
  schema: { type: 'string', format: 'date-time', examples: ['2025-01-31T00:00:00Z'] },
});
