// The submissions' part of the OpenAPI document (GET and POST /v1/submissions, GET
// /v1/submissions/{submissionId}, POST /v1/submissions/validate): their paths and schemas. The create
// schema is the very one the gateway validates requests with (shared/domain/submission-rules.ts), so
// the reference cannot drift from the behaviour.
import { SUBMISSION_STATUS_NAMES } from '@partner/shared/domain/clearance';
import { JOB_FAILURE_CODES } from '@partner/shared/domain/sandbox';
import { MAX_VALIDATION_ERRORS, submissionCreateSchema } from '@partner/shared/domain/submission-rules';
import { apiHeaders, authErrors, json, LIST_400, MUTATION_DESCRIPTION, mutationResponses, param, response, timestampParam, type Obj } from '../../openapi/common.js';
import { ref, UUID_EXAMPLE, type Schema } from '../../openapi/schemas.js';
import { clearanceListParam } from '../clearance/openapi.js';

/** A submission as GET /v1/submissions/{id} shows it (also the create job's result in the jobs' and events' examples). */
export const EXAMPLE_SUBMISSION = {
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
  risk: { annualRevenue: 2500000, employees: 12, industry: 'retail' },
};

const SUBMISSION_PAGE_EXAMPLES: Obj = {
  byExternalRef: {
    summary: 'GET /v1/submissions?externalRef=BROKER-REF-2041: the submission a lost job handle created',
    value: { items: [EXAMPLE_SUBMISSION], nextCursor: null },
  },
};

const RULE_ERROR_CODES = ['required', 'unknown_field', 'invalid', 'out_of_window', 'unknown_product', 'invalid_sandbox_directive'];
const submissionCreate = submissionCreateSchema;

/** A submission's fields as GET /v1/submissions/{submissionId} shows them; the create's result has them too. */
const SUBMISSION_PROPERTIES: Record<string, Schema> = {
  submissionId: ref('Uuid'),
  submissionName: { type: 'string', description: 'The legal name, trimmed, inner white space collapsed.', examples: ['Acme Holdings LLC'] },
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
  testClockId: { type: 'string', pattern: '^clk_[0-9a-z]{24}$', description: 'UAT only: the test clock the submission lives on (present only when it has one).' },
  risk: {
    type: ['object', 'null'],
    description: "The create body's `risk` object as it was sent (product-defined fields, judged by the product's risk schema); null when the create had none.",
    examples: [{ annualRevenue: 2500000, employees: 12, industry: 'retail' }],
  },
};

export const submissionSchemas: Record<string, Schema> = {
  SubmissionCreate: {
    ...submissionCreate,
    description:
      'A new-business submission. The five fields other than `risk` are required and unknown fields anywhere outside `risk` are refused (`validation_error`, ' +
      'each listed in `details`). `risk` is optional here; a product with a risk schema requires it (its `submissionSchema`). In the `uat` environment an `externalRef` of `sandbox:delay=<1..60>` makes the job take that many ' +
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
      risk: {
        ...submissionCreate.properties.risk,
        description:
          "Product-defined risk data (the fields a quote is rated on). A product whose requirements carry a risk schema requires `risk` and judges it " +
          "by that schema, embedded in its `submissionSchema` (`GET /v1/products/{productId}/requirements`): a body that breaks it fails the job with " +
          "`requirements_not_met` naming `risk.<field>`, and `POST /v1/submissions/validate` says the same. Stored with the submission and shown as its `risk`.",
        examples: [{ annualRevenue: 2500000, employees: 12, industry: 'retail' }],
      },
    },
  },
  SubmissionResult: {
    type: 'object',
    description:
      'The result of a submission job: returned inline (200) when it settles within the wait, and as the `result` of the succeeded job. ' +
      'It is the submission as `GET /v1/submissions/{submissionId}` shows it when the job settled (`requirements.currentlyDue` names ' +
      "the attachments still due), with the job's `receipt`. The result of a job that settled before results carried the whole " +
      'submission (jobs are kept, and an `Idempotency-Key` replay answers the stored result) has only `submissionId`, `submissionName`, ' +
      '`status`, `clearance` and `receipt`: `GET /v1/submissions/{submissionId}` shows the rest.',
    additionalProperties: false,
    required: ['submissionId', 'submissionName', 'status', 'clearance'],
    properties: {
      ...SUBMISSION_PROPERTIES,
      status: {
        type: 'string',
        enum: [...SUBMISSION_STATUS_NAMES],
        description: '`submitted`. A job delivered again after its submission was withdrawn (a worker lost before it settled) answers the submission as it is then.',
      },
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
    properties: SUBMISSION_PROPERTIES,
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
  ValidationResult: {
    type: 'object',
    additionalProperties: false,
    required: ['valid', 'errors', 'requirementsVersion'],
    description:
      '`valid: true`: a create with this body now succeeds unless the product changes first. `valid: false`: `errors` lists the fields the ' +
      'create would refuse (a create stops at its first stage: a body the generic schema refuses is a 400 naming those fields; one that ' +
      'breaks the product\'s requirements fails its job with `requirements_not_met` naming these).',
    properties: {
      valid: { type: 'boolean' },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['field', 'code', 'message'],
          properties: {
            field: { type: 'string', examples: ['applicant.taxId'] },
            code: { type: 'string', enum: RULE_ERROR_CODES },
            message: { type: 'string', examples: ['is required'] },
          },
        },
      },
      requirementsVersion: { type: ['integer', 'null'], description: 'The version judged against; null when the product is unknown or inactive.' },
      errorsTruncated: {
        const: true,
        description: `Present (true) only when more than ${MAX_VALIDATION_ERRORS} problems were found: \`errors\` holds ${MAX_VALIDATION_ERRORS} of them: the product, date-window and sandbox problems first, then the schema's in its order.`,
      },
    },
    examples: [
      { valid: true, errors: [], requirementsVersion: 3 },
      {
        valid: false,
        errors: [
          { field: 'applicant.taxId', code: 'required', message: 'is required' },
          { field: 'effectiveDate', code: 'out_of_window', message: 'must be 1 to 90 days after today (2026-11-26, UTC); it is 200 days' },
        ],
        requirementsVersion: 3,
      },
    ],
  },
};

export function submissionPaths(): Obj {
  const principal = param('PrincipalId');
  return {
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
    '/v1/submissions/validate': {
      post: {
        operationId: 'validateSubmission',
        tags: ['Submissions'],
        summary: 'Validate a create body (dry run)',
        description:
          'Judges a create body by every rule the create job applies — the schema, the product exists and is active, its requirements ' +
          '(required applicant fields, the effective-date window counted from today in UTC), sandbox directive syntax — and answers at ' +
          'once. Creates nothing: no job, no event, no idempotency key. Only a body that is not JSON, or not a JSON object, is a 400.',
        parameters: [principal],
        requestBody: { required: true, description: 'A submission create body (any JSON object), at most 1 MiB.', content: json(ref('SubmissionCreate')) },
        responses: {
          200: { description: 'The verdict.', headers: apiHeaders(), content: json(ref('ValidationResult')) },
          400: response('BadRequest'),
          413: { description: '`payload_too_large`: the body is over 1 MiB.', headers: apiHeaders(), content: json(ref('Error')) },
          415: { description: '`unsupported_media_type`: the body is not `application/json`.', headers: apiHeaders(), content: json(ref('Error')) },
          ...authErrors(),
        },
      },
    },
  };
}
