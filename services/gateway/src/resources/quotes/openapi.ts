// The quotes' part of the OpenAPI document: the quote, the request body (the very schema the route
// validates with), the job result, the list page, and the paths. The UAT test helper's path is in the
// UAT document only (production has no such path).
import { MAX_QUOTE_OPTIONS, QUOTE_STATUSES } from '@partner/shared/domain/quotes';
import { apiHeaders, authErrors, json, LIST_400, MUTATION_DESCRIPTION, mutationResponses, param, response, type Obj } from '../../openapi/common.js';
import { ref, UUID_EXAMPLE, type Schema } from '../../openapi/schemas.js';
import { DECIDE_NOTE_MAX, decideSchema, quoteRequestSchema } from './routes.js';

const QUOTE_ID_EXAMPLE = '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a90';
const OFFER_EXAMPLE =
  'eyJhbGciOiJFUzI1NiIsImtpZCI6InJrXzAxIiwidHlwIjoib2ZmZXIrandzIn0.eyJpc3MiOiJodHRwczovL2FwaS51YXQuZXhhbXBsZS5jb20iLCJxdW90ZUlkIjoiMDE5OWEzZTQtN2MxZC03YjUyLTlhMGUtM2YyZDRjNWI2YTkwIn0.c2lnbmF0dXJl';

const reason: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['code', 'field'],
  properties: {
    code: { type: 'string', description: "The rule's code, from the product's rating plan (or an underwriter's reason).", examples: ['revenue_over_authority'] },
    field: { type: ['string', 'null'], description: 'The submission field the rule read (null for an underwriter\'s decline).', examples: ['risk.annualRevenue'] },
  },
};

const openExample = {
  quoteId: QUOTE_ID_EXAMPLE,
  submissionId: UUID_EXAMPLE,
  productId: '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a10',
  status: 'open',
  option: { limit: '1000000', retention: '10000' },
  premium: { amount: '2475.00', currency: 'USD' },
  ratingVersion: 3,
  validUntil: '2026-12-21T12:00:08.012Z',
  referral: null,
  decline: null,
  offer: OFFER_EXAMPLE,
  testClockId: null,
  createdAt: '2026-11-21T12:00:08.012Z',
  updatedAt: '2026-11-21T12:00:08.012Z',
};
const referredExample = {
  ...openExample,
  quoteId: '0199a3e4-7c1d-7b52-9a0e-3f2d4c5b6a91',
  status: 'referred',
  option: { limit: '5000000', retention: '10000' },
  premium: { amount: '9120.50', currency: 'USD' },
  validUntil: null,
  referral: { reasons: [{ code: 'revenue_over_authority', field: 'risk.annualRevenue' }], dueBy: '2026-11-22T12:00:08.012Z' },
  offer: null,
};

export const quoteSchemas: Record<string, Schema> = {
  QuoteStatus: {
    type: 'string',
    enum: [...QUOTE_STATUSES],
    description:
      '`open`: bindable until `validUntil` (carries `offer`); `referred`: waits on an underwriter (`referral.dueBy`); `declined`: a decline rule ' +
      'matched, or an underwriter declined; `bound`; `expired`: past `validUntil`; `superseded`: a later quote request of the same submission ' +
      'replaced it; `not_taken`: a sibling was bound, or the submission was withdrawn.',
  },
  QuoteReason: reason,
  QuoteOption: {
    type: 'object',
    additionalProperties: false,
    required: ['limit', 'retention'],
    description: "A limit and a retention, decimal strings naming keys of the product's rating plan.",
    properties: {
      limit: { ...quoteRequestSchema.properties.options.items.properties.limit, examples: ['1000000'] },
      retention: { ...quoteRequestSchema.properties.options.items.properties.retention, examples: ['10000'] },
    },
  },
  Quote: {
    type: 'object',
    additionalProperties: false,
    description:
      'A price for one option of a submission, rated with the product\'s rating plan (`ratingVersion`). Decline rules are checked first, then ' +
      'refer rules; every matching reason is listed.',
    required: ['quoteId', 'submissionId', 'productId', 'status', 'option', 'premium', 'ratingVersion', 'validUntil', 'referral', 'decline', 'offer', 'testClockId', 'createdAt', 'updatedAt'],
    properties: {
      quoteId: ref('Uuid'),
      submissionId: ref('Uuid'),
      productId: ref('Uuid'),
      status: ref('QuoteStatus'),
      option: ref('QuoteOption'),
      premium: { anyOf: [ref('Money'), { type: 'null' }], description: 'Null when declined.' },
      ratingVersion: { type: 'integer', minimum: 1, description: 'The version of the rating plan that priced it.', examples: [3] },
      validUntil: { type: ['string', 'null'], format: 'date-time', description: 'While `open`: bindable until then. Null until the quote is open.', examples: ['2026-12-21T12:00:08.012Z'] },
      referral: {
        type: ['object', 'null'],
        additionalProperties: false,
        required: ['reasons', 'dueBy'],
        description: 'When a refer rule matched: why, by when an underwriter decides, and the decision once made (`quote.updated`).',
        properties: {
          reasons: { type: 'array', items: ref('QuoteReason') },
          dueBy: ref('Timestamp'),
          decision: {
            type: 'object',
            additionalProperties: false,
            required: ['outcome', 'decidedAt'],
            properties: {
              outcome: { type: 'string', enum: ['approved', 'declined'] },
              note: { type: 'string' },
              decidedAt: ref('Timestamp'),
            },
          },
        },
      },
      decline: {
        type: ['object', 'null'],
        additionalProperties: false,
        required: ['reasons'],
        description: 'When declined: every decline rule that matched (or the underwriter\'s reason).',
        properties: { reasons: { type: 'array', items: ref('QuoteReason') } },
      },
      offer: {
        type: ['string', 'null'],
        description:
          'While `open`: a compact JWS (ES256, header `typ: "offer+jws"`, a `kid` of `/.well-known/receipt-keys.json`) whose payload is ' +
          '`{iss, tenant, partnerId, quoteId, submissionId, productId, option, premium, validUntil, ratingVersion, iat}`, the quote\'s own ' +
          'values. Verify it offline against the receipt keys (the SDK\'s `verifyOffer`); a bind names its SHA-256. A new offer whenever the terms change.',
        examples: [OFFER_EXAMPLE],
      },
      testClockId: { type: ['string', 'null'], description: 'The submission\'s test clock (UAT), or null.', examples: [null] },
      createdAt: ref('Timestamp'),
      updatedAt: ref('Timestamp'),
    },
    examples: [openExample, referredExample],
  },
  QuoteRequest: {
    ...quoteRequestSchema,
    description: `1 to ${MAX_QUOTE_OPTIONS} distinct options. Unknown fields are refused (400 naming them); a bad option list is 400 naming \`options\`.`,
    properties: { options: { ...quoteRequestSchema.properties.options, items: ref('QuoteOption') } },
  },
  QuotesCreated: {
    type: 'object',
    additionalProperties: false,
    required: ['submissionId', 'quotes'],
    description: 'The result of a quote request: one quote per option, in the order of the request.',
    properties: { submissionId: ref('Uuid'), quotes: { type: 'array', items: ref('Quote') } },
    examples: [{ submissionId: UUID_EXAMPLE, quotes: [openExample, referredExample] }],
  },
  QuotePage: {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: ref('Quote') },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` (with the same filters) for the next page; null on the last page.' },
    },
  },
  QuoteDecide: {
    ...decideSchema,
    description: 'UAT only: the underwriter\'s decision on a referred quote. `premium` (approvals only) replaces the rated premium.',
    properties: {
      outcome: { ...decideSchema.properties.outcome, examples: ['approved'] },
      premium: { ...decideSchema.properties.premium, examples: ['9500.00'] },
      note: { ...decideSchema.properties.note, description: `Free text, 1–${DECIDE_NOTE_MAX} characters.`, examples: ['Approved with loss history reviewed.'] },
    },
  },
};

const quoteIdParam = { name: 'quoteId', in: 'path', required: true, description: 'Quote id (a malformed one is 404).', schema: ref('Uuid') };

export function quotePaths(ctx: { environment: string } = { environment: 'uat' }): Obj {
  const principal = param('PrincipalId');
  const paths: Obj = {
    '/v1/submissions/{submissionId}/quotes': {
      parameters: [param('SubmissionId')],
      post: {
        operationId: 'requestQuotes',
        tags: ['Quotes'],
        summary: 'Request quotes',
        description:
          'Rates 1–5 options of a submission with its product\'s rating plan. The job\'s result is `{submissionId, quotes}`, one quote per option in ' +
          'order; each is `open` (with `validUntil` and a signed `offer`), `referred` (an underwriter decides by `referral.dueBy`) or `declined`. ' +
          'Earlier `open` and `referred` quotes of the submission become `superseded`. `quote.created` is emitted for each quote. The job fails, ' +
          'creating no quote, with 409 `not_quotable` when the submission is withdrawn or bound (`details` names `status`) or its clearance is not ' +
          '`cleared` (`clearance.status`), 422 `requirements_not_met` while `requirements.currentlyDue` is not empty, 422 `option_not_offered` ' +
          'naming `options[i].limit` / `options[i].retention`, 422 `product_not_rated` when the product has no rating plan. Another partner\'s ' +
          `submission is 404 at once. ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: ref('QuoteRequest'),
              examples: { twoOptions: { value: { options: [{ limit: '1000000', retention: '10000' }, { limit: '5000000', retention: '10000' }] } } },
            },
          },
        },
        responses: mutationResponses(ref('QuotesCreated'), 'The quotes, one per option.', [413, 415]),
      },
      get: {
        operationId: 'listQuotes',
        tags: ['Quotes'],
        summary: 'List a submission\'s quotes',
        description: `The submission's quotes, newest first (by \`createdAt\`, then \`quoteId\`). Another partner's submission is 404. ${LIST_400}`,
        parameters: [param('Limit'), param('Cursor'), { name: 'status', in: 'query', description: 'Only quotes with this status.', schema: ref('QuoteStatus') }, principal],
        responses: {
          200: { description: 'One page of quotes.', headers: apiHeaders(), content: json(ref('QuotePage')) },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
    '/v1/quotes/{quoteId}': {
      parameters: [quoteIdParam],
      get: {
        operationId: 'getQuote',
        tags: ['Quotes'],
        summary: 'Read a quote',
        description: "One quote. Another partner's quote is indistinguishable from a missing one (404). Takes no query parameters (400).",
        parameters: [principal],
        responses: {
          200: { description: 'The quote.', headers: apiHeaders(), content: json(ref('Quote')) },
          400: response('BadRequest'),
          404: response('NotFound'),
          ...authErrors(),
        },
      },
    },
  };
  if (ctx.environment === 'uat') {
    paths['/v1/test_helpers/quotes/{quoteId}/decide'] = {
      parameters: [quoteIdParam],
      post: {
        operationId: 'decideQuoteTestHelper',
        tags: ['Quotes'],
        summary: 'Decide a referral (UAT test helper)',
        description:
          'UAT only (production has no such path: 404): play the underwriter for a `referred` quote. `approved` makes it `open` with a new ' +
          '`validUntil` and a new signed `offer` (at `premium` when given); `declined` makes it `declined`. The job\'s result is the quote; ' +
          '`quote.updated` is emitted. A quote that is not `referred` fails the job with 409 `conflict` (`details` names its `status`). ' +
          `${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('QuoteDecide'), examples: { approve: { value: { outcome: 'approved', premium: '9500.00' } } } } },
        },
        responses: mutationResponses(ref('Quote'), 'The decided quote.', [413, 415]),
      },
    };
  }
  return paths;
}
