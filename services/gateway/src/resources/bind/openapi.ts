// OpenAPI of the bind (docs/api.md "Quotes…", bind): the body (the very schema the route validates
// with) and the operation.
import { MUTATION_DESCRIPTION, mutationResponses, param, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';
import { quoteBindSchema } from './routes.js';

export const bindSchemas: Record<string, Schema> = {
  QuoteBind: {
    ...quoteBindSchema,
    description: 'The offer the partner accepts, named by its hash. Unknown fields are refused (400 naming them).',
    properties: {
      offerSha256: {
        ...quoteBindSchema.properties.offerSha256,
        description: 'Lowercase hex SHA-256 of the quote\'s `offer` (the compact JWS, as ASCII bytes) that the partner accepts: 64 characters `0-9a-f` (otherwise 400 naming it).',
        examples: ['9f2c4be1d0a7c3e5b8f6a1d2c3b4a5968778695a4b3c2d1e0f9e8d7c6b5a4938'],
      },
    },
  },
};

export function bindPaths(): Obj {
  return {
    '/v1/quotes/{quoteId}/bind': {
      parameters: [{ name: 'quoteId', in: 'path', required: true, description: 'Quote id (a malformed one is 404).', schema: ref('Uuid') }],
      post: {
        operationId: 'bindQuote',
        tags: ['Policies'],
        summary: 'Bind a quote: accept its offer and get the policy',
        description:
          'Accepts the terms of an `open` quote. `offerSha256` is the lowercase hex SHA-256 of the offer JWS accepted. The job fails, ' +
          'checked in this order, with 409 `quote_not_open` (`details` names the quote\'s `status`; an open quote past `validUntil` is ' +
          'recorded `expired`), 409 `offer_changed` (the hash is not the quote\'s current offer), 409 `not_quotable` (the submission is ' +
          'withdrawn). On success, all at once: the quote is `bound`, its siblings `not_taken`, the submission `bound`, and a policy is ' +
          'issued with its declarations PDF; the result is the policy. Of any number of binds of one submission\'s quotes, and of a bind ' +
          'racing a withdraw, exactly one wins (the losers fail `quote_not_open` naming the status their quote ends in, or the withdraw ' +
          'fails `not_withdrawable`). Receipts `bind.received` and `policy.issued` join the partner\'s chain; events `quote.updated`, ' +
          `\`policy.issued\`, \`submission.updated\`. An unknown quote or another partner's is 404 at once (no job). ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), param('PrincipalId')],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref('QuoteBind'),
              examples: { bind: { value: { offerSha256: '9f2c4be1d0a7c3e5b8f6a1d2c3b4a5968778695a4b3c2d1e0f9e8d7c6b5a4938' } } },
            },
          },
        },
        responses: mutationResponses(ref('Policy'), 'The policy issued.', [413, 415]),
      },
    },
  };
}
