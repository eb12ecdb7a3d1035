// POST /v1/submissions (submissions/write; a job), GET /v1/submissions/{id} and GET /v1/submissions
// (submissions/read), and POST /v1/submissions/validate (submissions/write): the create body judged at
// once by the rule set the create job uses (shared/domain/submission-rules.ts), creating nothing.
// The list is for reconciliation ("lost a job handle? find it by externalRef"): its query string is
// validated here, every bad parameter reported at once in `details` (400 validation_error), and the
// submission service checks the same rules again and owns the cursors (signed, bound to partner and
// filters).
import type Router from '@koa/router';
import { normalizeApplicant, type Applicant } from '@partner/shared/domain/applicant';
import { checkSubmission, firstProblems, submissionCreateSchema, utcToday } from '@partner/shared/domain/submission-rules';
import { isPrincipalId, isUuid } from '@partner/shared/domain/ids';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { grpcOptions, ownerOf, type GatewayContext, type GatewayState } from '../../context.js';
import { clockAt } from '@partner/shared/domain/clock';
import { TEST_CLOCK_ID } from '@partner/shared/domain/test-clocks';
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { sandboxIssue } from '@partner/shared/domain/sandbox';
import { readJson } from '../../http/body.js';
import { validator } from '../../http/validate.js';
import type { RouteDeps } from '../deps.js';
import { runMutation } from '../../jobs/mutations.js';
import { submissionRecord } from '@partner/shared/domain/submission-record';
import { contentSha256 } from '../receipts/content-hash.js';
import { checkEnum, checkTimestamps, readListQuery } from '../../http/list-query.js';
import { CLEARANCE_STATUSES, SUBMISSION_STATUS_NAMES } from '@partner/shared/domain/clearance';

const SUBMISSION_PARAMS = new Set(['limit', 'cursor', 'externalRef', 'status', 'createdSince', 'updatedSince', 'principalId', 'clearance']);
const EXTERNAL_REF_MAX = 200;

export interface SubmissionCreate {
  externalRef: string;
  submissionType: 'application';
  effectiveDate: string;
  productId: string;
  applicant: Applicant;
  /** UAT only: the test clock the submission lives on (issue 44). */
  testClockId?: string;
  /** Product-defined risk data (API.md "Risk data"). */
  risk?: Record<string, unknown>;
}

/** A value that looks like a UAT sandbox directive must be a valid one, never a real submission. */
function checkSandbox(externalRef: string): void {
  const issue = sandboxIssue(externalRef);
  if (!issue) return;
  throw new DomainError('validation_error', 'the request body is invalid; see details', { details: [{ field: 'externalRef', issue }] });
}

export function submissionRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  // The day a validation judges the effective-date window on: in UAT, a body's test clock's day (a
  // clock that is not the partner's judges on the wall clock; the create job then fails it
  // unknown_test_clock), else today (issue 44).
  const validationDay = async (ctx: GatewayContext, body: object): Promise<string> => {
    const clockId = (body as { testClockId?: unknown }).testClockId;
    if (deps.config.environment !== 'uat' || typeof clockId !== 'string' || !TEST_CLOCK_ID.test(clockId)) return utcToday();
    const clock = await deps.clients.policy.GetTestClock({ owner: ownerOf(ctx), testClockId: clockId }, grpcOptions(ctx, deps.config.grpcTimeoutMs)).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === 'not_found') return undefined;
      throw err;
    });
    return clock?.testClock ? utcToday(clockAt(new Date(clock.testClock.frozenTime))) : utcToday();
  };

  const validateCreate = validator<SubmissionCreate>(submissionCreateSchema);

  router.post('/submissions', deps.guard('submissions/write'), async (ctx) => {
    const body = validateCreate(await readJson(ctx, deps.config.jsonLimitBytes));
    if (deps.config.environment === 'uat') checkSandbox(body.externalRef);
    // Test clocks are UAT only: production names the field it refuses (API.md "Test clocks").
    else if (body.testClockId !== undefined) {
      throw new DomainError('validation_error', 'the request body is invalid; see details', {
        details: [{ field: 'testClockId', issue: 'is not accepted in production: test clocks exist in UAT only' }],
      });
    }
    // The receipt's content hash: of the body as the partner sent it (validation changes nothing;
    // hashed once valid, so a refused body costs no hashing), before anything is normalized.
    const sha256 = contentSha256(body);
    const payload = { ...body, productId: body.productId.toLowerCase(), applicant: normalizeApplicant(body.applicant) };
    await runMutation(ctx, deps, {
      kind: JOB_KINDS.submissionCreate,
      payload: { ...payload, contentSha256: sha256 },
      fingerprintOf: payload,
    });
  });

  router.get(
    '/submissions/:id',
    // /submissions/validate is a path of its own (POST only), not a submission id: GET is a 405.
    async (ctx, next) => {
      if (ctx.params.id !== 'validate') return next();
      ctx.set('Allow', 'POST');
      throw new DomainError('method_not_allowed', `${ctx.method} is not allowed here; see the Allow header`);
    },
    deps.guard('submissions/read'),
    async (ctx) => {
      const id = ctx.params.id ?? '';
      if (!isUuid(id)) throw notFound('submission');
      const owner = ownerOf(ctx);
      const submissionId = id.toLowerCase();
      const { submission: s } = await deps.clients.submission.GetSubmission({ owner, submissionId }, grpcOptions(ctx, deps.config.grpcTimeoutMs));
      deps.waiters.knownResources.remember(owner, 'submission', submissionId);
      ctx.body = submissionRecord(s!);
    },
  );

  router.post('/submissions/validate', deps.guard('submissions/write'), async (ctx) => {
    // Only a body that is not JSON, or not an object, is a 400: a string with control characters is
    // one of the errors the schema names (USABLE_TEXT), as a create would refuse it.
    const body = await readJson(ctx, deps.config.jsonLimitBytes, { textProblems: 'leave' });
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new DomainError('validation_error', 'the request body must be a JSON object (a submission create body)', {
        details: [{ field: '(body)', issue: 'must be a JSON object' }],
      });
    }
    const productId = (body as { productId?: unknown }).productId;
    const product = typeof productId === 'string' && isUuid(productId) ? await deps.products(productId.toLowerCase()) : undefined;
    const { errors, truncated } = firstProblems(checkSubmission(body, product, { today: await validationDay(ctx, body), sandbox: deps.config.environment === 'uat' }));
    ctx.body = {
      valid: errors.length === 0,
      errors,
      requirementsVersion: product?.active ? product.requirementsVersion : null,
      ...(truncated ? { errorsTruncated: true } : {}),
    };
  });


  router.get('/submissions', deps.guard('submissions/read'), async (ctx) => {
    const { params, page } = readListQuery(ctx.querystring, SUBMISSION_PARAMS, (p, details) => {
      const ref = p.get('externalRef');
      if (ref !== undefined && (ref === '' || [...ref].length > EXTERNAL_REF_MAX)) {
        details.push({ field: 'externalRef', issue: `must be 1-${EXTERNAL_REF_MAX} characters, matched exactly` });
      }
      checkEnum(p, 'status', SUBMISSION_STATUS_NAMES, details);
      checkEnum(p, 'clearance', CLEARANCE_STATUSES, details);
      checkTimestamps(p, ['createdSince', 'updatedSince'], details);
      const principal = p.get('principalId');
      if (principal !== undefined && !isPrincipalId(principal)) {
        details.push({ field: 'principalId', issue: 'must be 1-128 of letters, digits and . _ : @ - (starting with a letter or digit)' });
      }
    });
    const res = await deps.clients.submission.ListSubmissions(
      {
        owner: ownerOf(ctx),
        ...page,
        externalRef: params.get('externalRef') ?? '',
        status: params.get('status') ?? '',
        createdSince: params.get('createdSince') ?? '',
        updatedSince: params.get('updatedSince') ?? '',
        principalId: params.get('principalId') ?? '',
        clearance: params.get('clearance') ?? '',
      },
      grpcOptions(ctx, deps.config.grpcTimeoutMs),
    );
    ctx.body = { items: res.submissions.map(submissionRecord), nextCursor: res.nextPageToken || null };
  });
}
