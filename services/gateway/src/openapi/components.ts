// The OpenAPI document's `components`: the security scheme (security.ts), the parameters, headers and
// error responses the operations share, and the schemas: the shared ones (schemas.ts, errors.ts) and
// every resource's, gathered by document.ts.
import { apiHeaders, header, json, type Obj } from './common.js';
import type { OpenApiOptions } from './options.js';
import { ref, type Schema } from './schemas.js';
import { securitySchemes } from './security.js';

const errorResponse = (description: string, headers: Obj = {}): Obj => ({
  description,
  headers: { ...apiHeaders(), ...headers },
  content: json(ref('Error')),
});

/** The components for one environment (its token URL and access scope), with the document's schemas. */
export function components(opts: Pick<OpenApiOptions, 'tokenUrl' | 'scope' | 'environment'>, schemas: Record<string, Schema>): Obj {
  const stringHeader = (description: string, schema: Schema = { type: 'string' }, required = false): Obj => ({ description, required, schema });
  return {
    securitySchemes: securitySchemes(opts),
    parameters: {
      PrincipalId: {
        name: 'x-principal-id',
        in: 'header',
        description:
          'Attributes the request to a principal registered for the partner (1–128 letters, digits and `._:@-`). Unregistered or ' +
          'malformed values, even empty ones, are 403 `principal_not_registered`.',
        schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$', examples: ['demo-broker'] },
      },
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        description:
          'A unique key per intended mutation (a UUID is ideal), bare or as a quoted string; 1–255 printable ASCII characters ' +
          '(otherwise 400 `validation_error`). Scoped to the client, method and path; kept 24 hours. The same key with the same request ' +
          'returns the same job (`Idempotent-Replayed: true`), with a different request 422 `idempotency_key_reused`. Without a key every ' +
          'request creates a new job.',
        schema: { type: 'string', minLength: 1, maxLength: 257, examples: ['6f9619ff-8b86-4d01-b42d-00cf4fc964ff'] },
      },
      Prefer: {
        name: 'Prefer',
        in: 'header',
        description:
          'RFC 7240. `wait=N` (whole seconds, clamped to 0..30) holds the request until the job settles or N seconds pass. Honoured ' +
          'preferences are echoed in `Preference-Applied`; malformed ones are ignored. A partner holds at most 100 waiting requests ' +
          'per gateway: beyond that a request with `wait` is refused with 429 `rate_limited` and `Retry-After`, before anything is done for it.',
        schema: { type: 'string', examples: ['wait=15'] },
      },
      IfNoneMatch: {
        name: 'If-None-Match',
        in: 'header',
        description: 'An ETag from an earlier download: 304 when it still matches.',
        schema: { type: 'string' },
      },
      Limit: {
        name: 'limit',
        in: 'query',
        description: 'Page size, 1..200 (outside that range 400).',
        schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
      },
      Cursor: {
        name: 'cursor',
        in: 'query',
        description: '`nextCursor` of the previous page, unchanged, with the same filters (`limit` may change). Empty means the first page.',
        schema: { type: 'string', maxLength: 512 },
      },
      PolicyId: { name: 'policyId', in: 'path', required: true, description: 'Policy id (a malformed one is 404).', schema: ref('Uuid') },
      SubmissionId: { name: 'submissionId', in: 'path', required: true, description: 'Submission id (a malformed one is 404).', schema: ref('Uuid') },
      AttachmentId: { name: 'attachmentId', in: 'path', required: true, description: 'Attachment id (a malformed one is 404).', schema: ref('Uuid') },
      JobId: { name: 'jobId', in: 'path', required: true, description: 'Job handle (a malformed one is 404).', schema: ref('JobId') },
    },
    headers: {
      'X-Request-Id': stringHeader(
        'On every response: the `X-Request-Id` the client sent when it is 1–128 of letters, digits and `._:-`, otherwise a generated UUID. Quote it when reporting a problem.',
        { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
        true,
      ),
      'Cache-Control': stringHeader('API responses are not cached.', { type: 'string', const: 'no-store' }, true),
      'X-Content-Type-Options': stringHeader('Always `nosniff`.', { type: 'string', const: 'nosniff' }, true),
      'RateLimit-Policy': stringHeader('The client\'s rate-limit policy (draft-ietf-httpapi-ratelimit-headers), e.g. `"client";q=100;w=2`.', {
        type: 'string',
        examples: ['"client";q=100;w=2'],
      }),
      RateLimit: stringHeader('What is left of the rate limit, e.g. `"client";r=99;t=1`.', { type: 'string', examples: ['"client";r=99;t=1'] }),
      'RateLimit-Policy-Required': stringHeader('The rate-limit policy that was exceeded.', { type: 'string' }, true),
      'RateLimit-Required': stringHeader('What is left of the rate limit (none).', { type: 'string' }, true),
      'Retry-After': stringHeader('Seconds to wait before the next request (polling the job, or retrying).', { type: 'integer', minimum: 0 }, true),
      'Retry-After-Processing': stringHeader('Present with the `processing` body: seconds before polling again (5).', { type: 'integer', minimum: 0 }),
      Location: stringHeader('The job\'s `statusUrl`.', { type: 'string', format: 'uri' }, true),
      'Preference-Applied': stringHeader('The `Prefer: wait` that was honoured, with the effective N (absent when the gateway could not hold the request).', {
        type: 'string',
        pattern: '^wait=\\d+$',
      }),
      Vary: stringHeader('`Prefer`: the response depends on the `Prefer` header.', { type: 'string', pattern: 'Prefer' }, true),
      'Idempotent-Replayed': stringHeader('`true` when the response is for the earlier job of the same `Idempotency-Key`.', { type: 'string', const: 'true' }),
      'Job-Id': stringHeader(
        'The job that carried out the mutation (its id, as in `statusUrl`): on a 200 the only place it appears, so the result can be traced to its job (`GET /v1/jobs/{jobId}`, the job list, the events).',
        ref('JobId'),
        true,
      ),
      'WWW-Authenticate': stringHeader(
        'RFC 6750: `Bearer realm="partner-api"` without a usable token, with `error="invalid_token"` for a bad one.',
        { type: 'string', pattern: '^Bearer ' },
        true,
      ),
      'WWW-Authenticate-Optional': stringHeader(
        'With `insufficient_scope`: `Bearer realm="partner-api", error="insufficient_scope", scope="<this environment\'s scope>"`.',
        { type: 'string', pattern: '^Bearer ' },
      ),
      Allow: stringHeader('The methods the path allows.', { type: 'string' }, true),
      'Content-Disposition': stringHeader('`attachment; filename="<ASCII fallback>"; filename*=UTF-8\'\'<name>` (RFC 6266).', { type: 'string' }, true),
      'Content-Length': stringHeader('Size of the file in bytes.', { type: 'integer', minimum: 0 }, true),
      ETag: stringHeader('The quoted lowercase hex sha256 of the bytes.', { type: 'string', pattern: '^"[0-9a-f]{64}"$' }, true),
    },
    responses: {
      BadRequest: errorResponse(
        '`validation_error`: a bad or unknown query parameter, or on any operation a query parameter with a control character ' +
          '(U+0000–U+001F, U+007F); `details` names every one.',
      ),
      Unauthenticated: errorResponse(
        '`unauthenticated` (no or malformed `Authorization` header) or `invalid_token` (bad signature, expired, not yet valid, wrong issuer or audience, unknown key, ' +
          'a lifetime longer than the issuer grants, a revoked token or a disabled client). Fetch a new token and retry once.',
        { 'WWW-Authenticate': header('WWW-Authenticate') },
      ),
      Forbidden: errorResponse(
        "`insufficient_scope` (the token carries another environment's scope; with `WWW-Authenticate`), `forbidden` (the client is not provisioned with the permission this operation needs) or `principal_not_registered` (`x-principal-id` is not a principal registered for the partner).",
        { 'WWW-Authenticate': header('WWW-Authenticate-Optional') },
      ),
      NotFound: errorResponse("`not_found`: unknown or malformed id, or a resource of another partner (indistinguishable), or an unknown path."),
      MethodNotAllowed: errorResponse('`method_not_allowed`: the path does not allow this method; `Allow` lists the ones it does.', { Allow: header('Allow') }),
      RateLimited: errorResponse('`rate_limited` (retryable): the client exceeded its rate limit. Wait `Retry-After` seconds.', {
        'Retry-After': header('Retry-After'),
        'RateLimit-Policy': header('RateLimit-Policy-Required'),
        RateLimit: header('RateLimit-Required'),
      }),
      Internal: errorResponse('`internal` (retryable): something unexpected went wrong. Retry with backoff; report the `X-Request-Id` if it persists.'),
      Unavailable: errorResponse('`unavailable` (retryable): a dependency is unavailable. Retry after `Retry-After` seconds.', { 'Retry-After': header('Retry-After') }),
    },
    schemas,
  };
}
