// Test clocks (API.md "Test clocks", UAT only; issue 44): POST /v1/test_clocks (a job,
// test_clock.create), GET /v1/test_clocks/{id}, GET /v1/test_clocks (paginated), DELETE
// /v1/test_clocks/{id} (a job, test_clock.delete) and POST /v1/test_clocks/{id}/advance (a job,
// test_clock.advance). In production none of these routes is registered: every path is an unknown
// one (404), and the production OpenAPI document has none of them (openapi.ts).
//
// An advance's frozenTime is judged against the clock before anything is queued (400 naming
// frozenTime: not RFC 3339 with a zone, not later than the clock's time, more than two years ahead);
// the job checks again under the clock's lock.
import type Router from '@koa/router';
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { parseTimestamp } from '@partner/shared/domain/time';
import { TEST_CLOCK_ID, testClockRecordOf } from '@partner/shared/domain/test-clocks';
import { grpcOptions, ownerOf, type GatewayContext, type GatewayState } from '../../context.js';
import { readJson } from '../../http/body.js';
import { validator } from '../../http/validate.js';
import { invalidQuery, readListQuery, singleParams } from '../../http/list-query.js';
import { runMutation } from '../../jobs/mutations.js';
import type { RouteDeps } from '../deps.js';

/** Live clocks per partner (the policy service enforces it; an advance goes at most two calendar years). */
export const MAX_LIVE_CLOCKS = 10;
const LIST_PARAMS = new Set(['limit', 'cursor']);

export interface TestClockCreate {
  frozenTime: string;
  name?: string;
}

export interface TestClockAdvance {
  frozenTime: string;
}

const frozenTimeProperty = { type: 'string', minLength: 1, maxLength: 64 } as const;

export const testClockCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['frozenTime'],
  properties: {
    frozenTime: frozenTimeProperty,
    name: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;

export const testClockAdvanceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['frozenTime'],
  properties: { frozenTime: frozenTimeProperty },
} as const;

const FROZEN_TIME_ISSUE = 'must be an RFC 3339 timestamp with a time zone, such as 2027-01-31T00:00:00Z';
const frozenTimeError = (issue: string): DomainError =>
  new DomainError('validation_error', 'the request body is invalid; see details', { details: [{ field: 'frozenTime', issue }] });

/** frozenTime as epoch ms, or 400 naming it. */
function frozenTimeOf(s: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}[Tt]/.test(s) ? parseTimestamp(s) : undefined;
  if (ms === undefined) throw frozenTimeError(FROZEN_TIME_ISSUE);
  return ms;
}

function noQuery(ctx: GatewayContext): void {
  const details: ErrorDetail[] = [];
  singleParams(ctx.querystring, new Set(), details);
  if (details.length > 0) throw invalidQuery(details);
}

function clockId(ctx: GatewayContext): string {
  const id = ctx.params.id ?? '';
  if (!TEST_CLOCK_ID.test(id)) throw notFound('test clock');
  return id;
}

export function testClockRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  // UAT only: in production the paths do not exist (404 like any unknown path).
  if (deps.config.environment !== 'uat') return;
  const validateCreate = validator<TestClockCreate>(testClockCreateSchema);
  const validateAdvance = validator<TestClockAdvance>(testClockAdvanceSchema);
  const callOptions = (ctx: GatewayContext) => grpcOptions(ctx, deps.config.grpcTimeoutMs);
  const readClock = async (ctx: GatewayContext, id: string) => {
    const { testClock } = await deps.clients.policy.GetTestClock({ owner: ownerOf(ctx), testClockId: id }, callOptions(ctx));
    return testClock!;
  };

  router.post('/test_clocks', deps.guard('submissions/write'), async (ctx) => {
    const body = validateCreate(await readJson(ctx, deps.config.jsonLimitBytes));
    frozenTimeOf(body.frozenTime);
    const payload = { frozenTime: body.frozenTime, ...(body.name !== undefined ? { name: body.name } : {}) };
    await runMutation(ctx, deps, { kind: JOB_KINDS.testClockCreate, payload, fingerprintOf: payload });
  });

  router.get('/test_clocks', deps.guard('submissions/read'), async (ctx) => {
    const { page } = readListQuery(ctx.querystring, LIST_PARAMS, () => {});
    const res = await deps.clients.policy.ListTestClocks({ owner: ownerOf(ctx), ...page }, callOptions(ctx));
    ctx.body = { items: res.testClocks.map(testClockRecordOf), nextCursor: res.nextPageToken || null };
  });

  router.get('/test_clocks/:id', deps.guard('submissions/read'), async (ctx) => {
    noQuery(ctx);
    ctx.body = testClockRecordOf(await readClock(ctx, clockId(ctx)));
  });

  router.delete('/test_clocks/:id', deps.guard('submissions/write'), async (ctx) => {
    const id = clockId(ctx);
    // Another partner's clock or an unknown one: 404 before a job is queued.
    await readClock(ctx, id);
    const payload = { testClockId: id };
    await runMutation(ctx, deps, { kind: JOB_KINDS.testClockDelete, payload, ids: { id }, fingerprintOf: payload });
  });

  router.post('/test_clocks/:id/advance', deps.guard('submissions/write'), async (ctx) => {
    const id = clockId(ctx);
    const body = validateAdvance(await readJson(ctx, deps.config.jsonLimitBytes));
    const target = frozenTimeOf(body.frozenTime);
    const clock = await readClock(ctx, id);
    const current = Date.parse(clock.frozenTime);
    // Judged against the clock's time as read now; a clock that is advancing is judged against where
    // its advance goes by the job (clock_advancing), not here.
    if (clock.status !== 'advancing') {
      if (target <= current) throw frozenTimeError(`must be later than the clock's frozenTime (${clock.frozenTime})`);
      const limit = new Date(current);
      limit.setUTCFullYear(limit.getUTCFullYear() + 2);
      if (target > limit.getTime()) throw frozenTimeError('must be at most two years after the clock\'s frozenTime');
    }
    const payload = { testClockId: id, frozenTime: body.frozenTime };
    await runMutation(ctx, deps, { kind: JOB_KINDS.testClockAdvance, payload, ids: { id }, fingerprintOf: payload });
  });
}
