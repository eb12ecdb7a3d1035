// The product catalogue's part of the OpenAPI document (GET /v1/products, /v1/products/{productId},
// /v1/products/{productId}/requirements): schemas and paths, and `SubmissionRequirements`, what a
// submission shows of its product's requirements.
import { REQUIRABLE_APPLICANT_FIELDS } from '@partner/shared/domain/requirements';
import { submissionSchemaFor } from '@partner/shared/domain/submission-rules';
import { apiHeaders, authErrors, json, param, response, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';

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
};

export function productPaths(): Obj {
  const principal = param('PrincipalId');
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
          param('Limit'),
          param('Cursor'),
          { name: 'active', in: 'query', description: 'Only active (`true`) or inactive (`false`) products.', schema: { type: 'string', enum: ['true', 'false'] } },
          principal,
        ],
        responses: {
          200: { description: 'One page of products.', headers: apiHeaders(), content: json(ref('ProductPage')) },
          400: response('BadRequest'),
          ...authErrors(),
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
          200: { description: 'The product.', headers: apiHeaders(), content: json(ref('Product')) },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
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
            headers: { ...apiHeaders(), ETag: { description: 'Strong entity tag of this answer.', schema: { type: 'string' } } },
            content: json(ref('ProductRequirements')),
          },
          304: {
            description: 'Not modified: the `ETag` sent in `If-None-Match` is current.',
            headers: { ...apiHeaders(), ETag: { description: 'The current entity tag.', schema: { type: 'string' } } },
          },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
  };
}
