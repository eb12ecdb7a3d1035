// OpenAPI of test clocks (API.md "Test clocks", UAT only): the bodies (the very schemas the routes
// validate with), the clock record, its page, the jobs' results and the paths. The resource is
// `uatOnly`: a production document has none of it.
import { apiHeaders, authErrors, json, LIST_400, MUTATION_DESCRIPTION, mutationResponses, param, response, type Obj } from '../../openapi/common.js';
import { ref, type Schema } from '../../openapi/schemas.js';
import { testClockAdvanceSchema, testClockCreateSchema } from './routes.js';

const CLOCK_ID = '^clk_[0-9a-z]{24}$';
const EXAMPLE_ID = 'clk_4f1c2b7d9e0a3c5b8d6e1f20';
const frozenTime = {
  ...testClockCreateSchema.properties.frozenTime,
  description:
    'RFC 3339 timestamp with a time zone (otherwise 400 naming `frozenTime`). On an advance: later than the clock\'s `frozenTime` and at most two years after it.',
  examples: ['2027-01-01T00:00:00Z'],
};
const clockExample = {
  testClockId: EXAMPLE_ID,
  name: 'renewal tests',
  frozenTime: '2027-01-01T00:00:00.000Z',
  status: 'ready',
  createdAt: '2026-11-27T05:00:00.000Z',
  updatedAt: '2026-11-27T05:00:00.000Z',
};

export const testClockSchemas: Record<string, Schema> = {
  TestClockId: { type: 'string', pattern: CLOCK_ID, description: 'A test clock id: `clk_` and 24 characters.', examples: [EXAMPLE_ID] },
  TestClock: {
    type: 'object',
    description: 'A test clock (UAT only): time a partner can move. Submissions created with its `testClockId` read its `frozenTime` instead of the wall clock.',
    required: ['testClockId', 'name', 'frozenTime', 'status', 'createdAt', 'updatedAt'],
    additionalProperties: false,
    properties: {
      testClockId: ref('TestClockId'),
      name: { type: ['string', 'null'], description: 'The name given at create, or null.' },
      frozenTime: { type: 'string', format: 'date-time', description: 'The clock\'s time (UTC, milliseconds).' },
      status: { type: 'string', enum: ['ready', 'advancing'], description: '`advancing` while an advance runs: quote and bind jobs on its submissions, and a delete, fail 409 `clock_advancing` (retryable).' },
      createdAt: { type: 'string', format: 'date-time', description: 'Real time.' },
      updatedAt: { type: 'string', format: 'date-time', description: 'Real time.' },
    },
    examples: [clockExample],
  },
  TestClockPage: {
    type: 'object',
    required: ['items', 'nextCursor'],
    additionalProperties: false,
    properties: { items: { type: 'array', items: ref('TestClock') }, nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last.' } },
  },
  TestClockCreate: {
    ...testClockCreateSchema,
    description: 'A new test clock. Unknown fields are refused (400 naming them).',
    properties: { frozenTime, name: { ...testClockCreateSchema.properties.name, description: 'A name for the partner\'s own use.', examples: ['renewal tests'] } },
  },
  TestClockAdvance: {
    ...testClockAdvanceSchema,
    description: 'The time to move the clock to. Unknown fields are refused (400 naming them).',
    properties: { frozenTime },
  },
  TestClockAdvanced: {
    type: 'object',
    description: 'The clock after its advance, and what the advance moved (a referral past its `dueBy` is reported as overdue here).',
    examples: [{ ...clockExample, frozenTime: '2027-02-01T00:00:00.000Z', updatedAt: '2026-11-27T05:01:00.000Z', applied: { quotesExpired: 2, policiesActivated: 1, policiesExpired: 0, referralsOverdue: 0 } }],
    required: ['testClockId', 'name', 'frozenTime', 'status', 'createdAt', 'updatedAt', 'applied'],
    additionalProperties: false,
    properties: {
      testClockId: ref('TestClockId'),
      name: { type: ['string', 'null'] },
      frozenTime: { type: 'string', format: 'date-time' },
      status: { type: 'string', enum: ['ready', 'advancing'] },
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
      applied: {
        type: 'object',
        required: ['quotesExpired', 'policiesActivated', 'policiesExpired', 'referralsOverdue'],
        additionalProperties: false,
        properties: {
          quotesExpired: { type: 'integer', minimum: 0 },
          policiesActivated: { type: 'integer', minimum: 0 },
          policiesExpired: { type: 'integer', minimum: 0 },
          referralsOverdue: { type: 'integer', minimum: 0 },
        },
      },
    },
  },
  TestClockDeleted: {
    type: 'object',
    required: ['testClockId', 'deleted'],
    examples: [{ testClockId: EXAMPLE_ID, deleted: true }],
    additionalProperties: false,
    properties: { testClockId: ref('TestClockId'), deleted: { type: 'boolean', const: true } },
  },
};

const idParam = { name: 'testClockId', in: 'path', required: true, description: 'Test clock id (a malformed one is 404).', schema: ref('TestClockId') };
const principal = param('PrincipalId');
const UAT = 'UAT only: in production this path does not exist (404).';

export function testClockPaths(): Obj {
  return {
    '/v1/test_clocks': {
      post: {
        operationId: 'createTestClock',
        tags: ['Test clocks'],
        summary: 'Create a test clock',
        description: `${UAT} Creates a clock stopped at \`frozenTime\`. A partner holds at most 10 live clocks: the 11th create fails 422 \`limit_exceeded\`. ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        requestBody: { required: true, content: { 'application/json': { schema: ref('TestClockCreate'), examples: { clock: { value: { frozenTime: '2027-01-01T00:00:00Z', name: 'renewal tests' } } } } } },
        responses: mutationResponses(ref('TestClock'), 'The clock.', [413, 415]),
      },
      get: {
        operationId: 'listTestClocks',
        tags: ['Test clocks'],
        summary: 'List test clocks',
        description: `${UAT} The partner's live clocks, newest first. ${LIST_400}`,
        parameters: [param('Limit'), param('Cursor'), principal],
        responses: {
          200: { description: 'One page of clocks.', headers: apiHeaders(), content: json(ref('TestClockPage')) },
          400: response('BadRequest'),
          ...authErrors(),
        },
      },
    },
    '/v1/test_clocks/{testClockId}': {
      parameters: [idParam],
      get: {
        operationId: 'getTestClock',
        tags: ['Test clocks'],
        summary: 'Read a test clock',
        description: `${UAT} Another partner's clock, or a deleted one, is 404.`,
        parameters: [principal],
        responses: {
          200: { description: 'The clock.', headers: apiHeaders(), content: json(ref('TestClock')) },
          404: response('NotFound'),
          ...authErrors(),
        },
      },
      delete: {
        operationId: 'deleteTestClock',
        tags: ['Test clocks'],
        summary: 'Delete a test clock',
        description: `${UAT} Its submissions, quotes and policies keep their state and stop moving. While the clock advances the job fails 409 \`clock_advancing\` (retryable). ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        responses: mutationResponses(ref('TestClockDeleted'), 'The clock is deleted.', []),
      },
    },
    '/v1/test_clocks/{testClockId}/advance': {
      parameters: [idParam],
      post: {
        operationId: 'advanceTestClock',
        tags: ['Test clocks'],
        summary: 'Advance a test clock',
        description:
          `${UAT} Moves the clock forward to \`frozenTime\` (later than its time, at most two years ahead; otherwise 400 naming \`frozenTime\`). ` +
          'While it runs the clock is `advancing` and quote and bind jobs on its submissions fail 409 `clock_advancing` (retryable). Every ' +
          'transition due at or before the new time happens in time order with its event (`quote.updated` → `expired`, `policy.updated` → ' +
          '`active` / `expired`; a referral past `dueBy` is counted as overdue in `applied`); the job succeeds only after all of them have ' +
          `committed, so a client that waited on it reads every record in its new state. ${MUTATION_DESCRIPTION}`,
        parameters: [param('IdempotencyKey'), param('Prefer'), principal],
        requestBody: { required: true, content: { 'application/json': { schema: ref('TestClockAdvance'), examples: { month: { value: { frozenTime: '2027-02-01T00:00:00Z' } } } } } },
        responses: mutationResponses(ref('TestClockAdvanced'), 'The clock at its new time.', [413, 415]),
      },
    },
  };
}
