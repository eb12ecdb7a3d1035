// The product catalogue's part of the OpenAPI document (GET /v1/products, /v1/products/{productId},
// /v1/products/{productId}/requirements, POST /v1/submissions/validate): schemas and paths, merged
// into document.ts and components.ts.
import { REQUIRABLE_APPLICANT_FIELDS } from '@partner/shared/domain/requirements';
import { submissionSchemaFor } from '@partner/shared/domain/submission-rules';
import { ref, type Schema } from './schemas.js';

type Obj = Record<string, unknown>;

const PRODUCT_ID = '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a70';
const PRODUCT_EXAMPLE = {
  productId: PRODUCT_ID,
  name: 'General Liability',
  active: true,
  requirementsVersion: 3,
  createdAt: '2026-11-01T09:00:00.000Z',
  updatedAt: '2026-11-20T15:30:00.000Z',
};
const REQUIREMENTS_EXAMPLE_DOC = {
  applicant: { required: ['taxId', 'address'] as ('taxId' | 'address')[] },
  effectiveDate: { minDaysAhead: 1, maxDaysAhead: 90 },
  attachments: [{ documentType: 'loss_run', min: 1, max: 5, mediaTypes: ['application/pdf'], maxBytes: 10485760 }],
};
const REQUIREMENTS_EXAMPLE = {
  productId: PRODUCT_ID,
  version: 3,
  submissionSchema: submissionSchemaFor({ productId: PRODUCT_ID, requirementsVersion: 3, requirements: REQUIREMENTS_EXAMPLE_DOC }),
  applicant: REQUIREMENTS_EXAMPLE_DOC.applicant,
  effectiveDate: REQUIREMENTS_EXAMPLE_DOC.effectiveDate,
  attachments: REQUIREMENTS_EXAMPLE_DOC.attachments,
};
const RULE_ERROR_CODES = ['required', 'unknown_field', 'invalid', 'out_of_window', 'unknown_product', 'invalid_sandbox_directive'];

export const productSchemas: Record<string, Schema> = {
  Product: {
    type: 'object',
    additionalProperties: false,
    required: ['productId', 'name', 'active', 'requirementsVersion', 'createdAt', 'updatedAt'],
    description: 'A product of the catalogue. The catalogue is the same for every partner.',
    properties: {
      productId: ref('Uuid'),
      name: { type: 'string' },
      active: { type: 'boolean', description: 'Only active products accept submissions (else the job fails `unknown_product`).' },
      requirementsVersion: { type: 'integer', minimum: 1, description: 'Bumped by every change of the requirements (`product.requirements_changed`).' },
      createdAt: ref('Timestamp'),
      updatedAt: ref('Timestamp'),
    },
    examples: [PRODUCT_EXAMPLE],
  },
  ProductPage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: { items: { type: 'array', items: ref('Product') }, nextCursor: { type: ['string', 'null'], description: 'null on the last page.' } },
    examples: [{ items: [PRODUCT_EXAMPLE], nextCursor: null }],
  },
  AttachmentRule: {
    type: 'object',
    additionalProperties: false,
    required: ['documentType', 'min', 'max', 'mediaTypes', 'maxBytes'],
    description:
      'What attachments of one document type a submission needs and may have. An upload that breaks it fails its job with 422 ' +
      '`requirements_not_met` naming `documentType` (`max` reached), `contentType` or `size`. A type the product does not list has no rule.',
    properties: {
      documentType: { type: 'string', examples: ['loss_run'] },
      min: { type: 'integer', minimum: 0, description: 'Attachments of this type the submission needs; until they are there it is in `currentlyDue`.' },
      max: { type: ['integer', 'null'], minimum: 0, description: 'At most this many (null: no limit).' },
      mediaTypes: { type: 'array', items: { type: 'string' }, description: 'Allowed media types (empty: any the generic rules allow).' },
      maxBytes: { type: ['integer', 'null'], minimum: 1, description: 'Largest file (null: the generic limit).' },
    },
  },
  ProductRequirements: {
    type: 'object',
    additionalProperties: false,
    required: ['productId', 'version', 'submissionSchema', 'applicant', 'effectiveDate', 'attachments'],
    description:
      "What the product accepts, machine-readable. `submissionSchema` is a JSON Schema 2020-12 document of the create body for this product " +
      '(the generic rules plus its required applicant fields), generated from the rules the server applies: a body a standard validator ' +
      '(Ajv 2020) accepts passes the server\'s schema and field checks, and one it rejects is rejected. The effective-date window is ' +
      'counted in UTC from the day the job runs, so only the server (and `POST /v1/submissions/validate`) can check it.',
    properties: {
      productId: ref('Uuid'),
      version: { type: 'integer', minimum: 1, description: 'The requirements version (`requirementsVersion` of the product).' },
      submissionSchema: { type: 'object', description: 'JSON Schema 2020-12 (with `$schema`) of the create body for this product.' },
      applicant: {
        type: 'object',
        additionalProperties: false,
        required: ['required'],
        properties: { required: { type: 'array', items: { type: 'string', enum: [...REQUIRABLE_APPLICANT_FIELDS] } } },
      },
      effectiveDate: {
        type: ['object', 'null'],
        additionalProperties: false,
        required: ['minDaysAhead', 'maxDaysAhead'],
        description: 'The effective date must lie this many days after today (UTC), bounds included; null bound: none. null: any date.',
        properties: { minDaysAhead: { type: ['integer', 'null'], minimum: 0 }, maxDaysAhead: { type: ['integer', 'null'], minimum: 0 } },
      },
      attachments: { type: 'array', items: ref('AttachmentRule') },
    },
    examples: [REQUIREMENTS_EXAMPLE],
  },
  SubmissionRequirements: {
    type: 'object',
    additionalProperties: false,
    required: ['version', 'currentlyDue'],
    description:
      "The product's requirements version that judged the submission at create (0 for submissions made before requirements existed), and " +
      'the attachment types whose `min` is not met yet. When an upload or delete changes that list, `submission.requirements_updated` is emitted.',
    properties: {
      version: { type: 'integer', minimum: 0 },
      currentlyDue: { type: 'array', items: { type: 'string', pattern: '^attachments\\.[a-z][a-z0-9_]*$' }, examples: [['attachments.loss_run']] },
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

export interface ProductPathHelpers {
  apiHeaders(): Obj;
  param(name: string): Obj;
  response(name: string): Obj;
  json(schema: Schema): Obj;
  authErrors(): Obj;
}

export function productPaths(h: ProductPathHelpers): Obj {
  const principal = h.param('PrincipalId');
  const productId = { name: 'productId', in: 'path', required: true, description: 'The product id.', schema: ref('Uuid') };
  return {
    '/v1/products': {
      get: {
        operationId: 'listProducts',
        tags: ['Products'],
        summary: 'List products',
        description:
          'The product catalogue, newest first; the same for every partner. Paginated like the policy list (`limit` 1..200, default 50; ' +
          'opaque `cursor` bound to the filter). A bad parameter is 400 `validation_error` naming it.',
        parameters: [
          h.param('Limit'),
          h.param('Cursor'),
          { name: 'active', in: 'query', description: 'Only active (`true`) or inactive (`false`) products.', schema: { type: 'string', enum: ['true', 'false'] } },
          principal,
        ],
        responses: {
          200: { description: 'One page of products.', headers: h.apiHeaders(), content: h.json(ref('ProductPage')) },
          400: h.response('BadRequest'),
          ...h.authErrors(),
        },
      },
    },
    '/v1/products/{productId}': {
      parameters: [productId],
      get: {
        operationId: 'getProduct',
        tags: ['Products'],
        summary: 'Read a product',
        description: 'One product. An unknown or malformed id is 404 `not_found`.',
        parameters: [principal],
        responses: {
          200: { description: 'The product.', headers: h.apiHeaders(), content: h.json(ref('Product')) },
          400: h.response('BadRequest'),
          404: h.response('NotFound'),
          ...h.authErrors(),
        },
      },
    },
    '/v1/products/{productId}/requirements': {
      parameters: [productId],
      get: {
        operationId: 'getProductRequirements',
        tags: ['Products'],
        summary: "Read a product's requirements",
        description:
          "The product's requirements and the JSON Schema of the create body for it, with a strong `ETag`. Send it back in " +
          '`If-None-Match` to get 304 while nothing changed. `product.requirements_changed` tells every partner when it does.',
        parameters: [
          principal,
          { name: 'If-None-Match', in: 'header', description: 'An `ETag` of an earlier answer: 304 when it is still current.', schema: { type: 'string' } },
        ],
        responses: {
          200: {
            description: 'The requirements.',
            headers: { ...h.apiHeaders(), ETag: { description: 'Strong entity tag of this answer.', schema: { type: 'string' } } },
            content: h.json(ref('ProductRequirements')),
          },
          304: {
            description: 'Not modified: the `ETag` sent in `If-None-Match` is current.',
            headers: { ...h.apiHeaders(), ETag: { description: 'The current entity tag.', schema: { type: 'string' } } },
          },
          400: h.response('BadRequest'),
          404: h.response('NotFound'),
          ...h.authErrors(),
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
        requestBody: { required: true, description: 'A submission create body (any JSON object), at most 1 MiB.', content: h.json(ref('SubmissionCreate')) },
        responses: {
          200: { description: 'The verdict.', headers: h.apiHeaders(), content: h.json(ref('ValidationResult')) },
          400: h.response('BadRequest'),
          413: { description: '`payload_too_large`: the body is over 1 MiB.', headers: h.apiHeaders(), content: h.json(ref('Error')) },
          415: { description: '`unsupported_media_type`: the body is not `application/json`.', headers: h.apiHeaders(), content: h.json(ref('Error')) },
          ...h.authErrors(),
        },
      },
    },
  };
}
