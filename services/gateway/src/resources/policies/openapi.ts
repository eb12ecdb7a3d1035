// The policies' part of the OpenAPI document (GET /v1/policies, GET /v1/policies/{policyId}): their
// paths and schemas.
import { POLICY_STATUSES } from '@partner/shared/domain/policies';
import { apiHeaders, authErrors, json, param, response, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';

export const policySchemas: Record<string, Schema> = {
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
      quoteId: { ...ref('Uuid'), description: 'Present only when a bind issued the policy: the quote bound.' },
      option: {
        type: 'object',
        additionalProperties: false,
        description: 'Present only when a bind issued the policy: the quote\'s option (decimal strings).',
        required: ['limit', 'retention'],
        properties: { limit: { type: 'string', examples: ['1000000'] }, retention: { type: 'string', examples: ['10000'] } },
      },
      testClockId: { type: 'string', description: 'Present only for a policy issued on a test clock (UAT).', examples: ['clk_0190c5f5a1b27c3d8e9f0a1b2c3d4e5f'] },
      createdAt: ref('Timestamp'),
      updatedAt: ref('Timestamp'),
    },
    examples: [
      {
        policyId: '0190c5f5-2a3b-7c4d-8e5f-6a7b8c9d0e1f',
        policyNumber: 'P-2026-00000042',
        status: 'pending',
        productId: '0190c5f5-0000-7000-8000-000000000001',
        insured: { legalName: 'Woodgrove Dental Practice' },
        effectiveDate: '2026-12-01',
        expirationDate: '2027-12-01',
        premium: { amount: '1234.50', currency: 'EUR' },
        submissionId: '0190c5f5-1111-7000-8000-000000000002',
        quoteId: '0190c5f5-2222-7000-8000-000000000003',
        option: { limit: '1000000', retention: '10000' },
        createdAt: '2026-11-27T05:00:00.000Z',
        updatedAt: '2026-11-27T05:00:00.000Z',
      },
    ],
  },
  PolicyDocument: {
    type: 'object',
    additionalProperties: false,
    required: ['documentId', 'kind', 'fileName', 'contentType', 'sizeBytes', 'sha256', 'createdAt'],
    properties: {
      documentId: ref('Uuid'),
      kind: { type: 'string', enum: ['declarations'] },
      fileName: { type: 'string', examples: ['declarations-P-2026-00000042.pdf'] },
      contentType: { type: 'string', enum: ['application/pdf'] },
      sizeBytes: { type: 'integer', minimum: 0, examples: [2210] },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Lowercase hex SHA-256 of the bytes (the content\'s `ETag`).' },
      createdAt: ref('Timestamp'),
    },
  },
  PolicyDocumentList: {
    type: 'object',
    additionalProperties: false,
    required: ['items'],
    properties: { items: { type: 'array', items: ref('PolicyDocument') } },
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
};

export function policyPaths(): Obj {
  const principal = param('PrincipalId');
  return {
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
    '/v1/policies/{policyId}/documents': {
      parameters: [param('PolicyId')],
      get: {
        operationId: 'listPolicyDocuments',
        tags: ['Policies'],
        summary: 'List a policy\'s documents',
        description: 'The documents of a policy: a policy a bind issued has its declarations PDF (policy number, insured, product, limit, retention, premium, both dates). An imported policy has none (empty list). Another partner\'s policy is 404.',
        parameters: [principal],
        responses: {
          200: {
            description: 'The documents.',
            headers: apiHeaders(),
            content: {
              'application/json': {
                schema: ref('PolicyDocumentList'),
                examples: {
                  declarations: {
                    value: {
                      items: [
                        {
                          documentId: '0190c5f5-3333-7000-8000-000000000004',
                          kind: 'declarations',
                          fileName: 'declarations-P-2026-00000042.pdf',
                          contentType: 'application/pdf',
                          sizeBytes: 2210,
                          sha256: '5d41402abc4b2a76b9719d911017c592ae1e7c5f9c0e1b2a3d4c5b6a79880716',
                          createdAt: '2026-11-27T05:00:00.000Z',
                        },
                      ],
                    },
                  },
                },
              },
            },
          },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
    '/v1/policies/{policyId}/documents/{documentId}/content': {
      parameters: [param('PolicyId'), { name: 'documentId', in: 'path', required: true, description: 'Document id (a malformed one is 404).', schema: ref('Uuid') }],
      get: {
        operationId: 'getPolicyDocumentContent',
        tags: ['Policies'],
        summary: 'Download a policy document',
        description: 'The document\'s bytes, streamed, with `ETag` = `"<sha256>"`; `If-None-Match` with that tag answers 304.',
        parameters: [principal, { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'A previous `ETag`.' }],
        responses: {
          200: {
            description: 'The PDF.',
            headers: {
              ...apiHeaders(),
              ETag: { description: 'The document\'s sha256, quoted.', schema: { type: 'string', examples: ['"5d41402abc4b2a76b9719d911017c592ae1e7c5f9c0e1b2a3d4c5b6a79880716"'] } },
              'Content-Disposition': { description: '`attachment` with the file name.', schema: { type: 'string', examples: ['attachment; filename="declarations-P-2026-00000042.pdf"'] } },
            },
            content: { 'application/pdf': { schema: { type: 'string', format: 'binary' }, examples: { pdf: { value: '%PDF-1.7 …' } } } },
          },
          304: { description: 'Not modified (`If-None-Match` matched).', headers: apiHeaders() },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
  };
}
