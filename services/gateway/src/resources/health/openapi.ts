// GET /v1/health's part of the OpenAPI document: its path and the `Health` schema.
import { apiHeaders, authErrors, json, param, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';

export const healthSchemas: Record<string, Schema> = {
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
};

export function healthPaths(): Obj {
  return {
    '/v1/health': {
      get: {
        operationId: 'getHealth',
        tags: ['Health'],
        summary: 'Who the credentials belong to',
        description: 'Echoes the tenant and partner the token is bound to, and the principal the request is attributed to with `x-principal-id`.',
        parameters: [param('PrincipalId')],
        responses: {
          200: { description: 'The caller.', headers: apiHeaders(), content: json(ref('Health')) },
          ...authErrors(),
        },
      },
    },
  };
}
