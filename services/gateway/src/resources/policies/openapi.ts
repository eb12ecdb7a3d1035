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
  };
}
