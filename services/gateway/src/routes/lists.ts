// GET /v1/jobs (jobs/read) and GET /v1/submissions (submissions/read): the calling partner's jobs
// and submissions, newest first, for reconciliation ("lost a job handle? find it by externalRef").
// The query string is validated here, every bad parameter reported at once in `details`
// (400 validation_error), with the list-query rules of the policy list; the job and submission
// services check the same rules again and own the cursors (signed, bound to partner and filters).
import type Router from '@koa/router';
import { type ErrorDetail } from '@partner/shared/domain/errors';
import { isPrincipalId } from '@partner/shared/domain/ids';
import { isSettled, JOB_KINDS, JOB_STATUS_FILTER, jobView } from '@partner/shared/domain/jobs';
import { isCursorShaped } from '@partner/shared/domain/list-cursor';
import { CURSOR_ISSUE } from '@partner/shared/domain/list-page';
import { parseTimestamp, TIMESTAMP_ISSUE } from '@partner/shared/domain/time';
import type { Job__Output } from '@partner/shared/generated/partner/job/v1/Job';
import { grpcOptions, ownerOf, type GatewayState } from '../context.js';
import { invalidQuery, pageParams, singleParams } from '../http/list-query.js';
import type { RouteDeps } from './deps.js';
import { settledJobBody } from './jobs.js';
import { submissionRecord } from '@partner/shared/domain/submission-record';
import { CLEARANCE_STATUSES, SUBMISSION_STATUS_NAMES } from '@partner/shared/domain/clearance';

const JOB_PARAMS = new Set(['limit', 'cursor', 'status', 'kind', 'createdSince', 'createdBefore']);
const SUBMISSION_PARAMS = new Set(['limit', 'cursor', 'externalRef', 'status', 'createdSince', 'updatedSince', 'principalId', 'clearance']);
const JOB_KIND_NAMES: readonly string[] = Object.values(JOB_KINDS);
export const SUBMISSION_STATUSES = SUBMISSION_STATUS_NAMES;
const EXTERNAL_REF_MAX = 200;

/**
 * The query's parameters and page, each bad one reported at once: unknown or repeated parameters,
 * limit, a cursor that cannot be one of these lists' (the service verifies the rest), and whatever
 * check() finds in the filters.
 */
function readQuery(
  querystring: string,
  allowed: ReadonlySet<string>,
  check: (params: Map<string, string>, details: ErrorDetail[]) => void,
): { params: Map<string, string>; page: { pageSize?: number; pageToken?: string } } {
  const details: ErrorDetail[] = [];
  const params = singleParams(querystring, allowed, details);
  const page = pageParams(params, details);
  if (page.pageToken !== undefined && !isCursorShaped(page.pageToken)) details.push({ field: 'cursor', issue: CURSOR_ISSUE });
  check(params, details);
  if (details.length > 0) throw invalidQuery(details);
  return { params, page };
}

function checkEnum(params: Map<string, string>, name: string, values: readonly string[], details: ErrorDetail[]): void {
  const v = params.get(name);
  if (v !== undefined && !values.includes(v)) details.push({ field: name, issue: `must be one of ${values.join(', ')}` });
}

function checkTimestamps(params: Map<string, string>, names: readonly string[], details: ErrorDetail[]): void {
  for (const name of names) {
    const v = params.get(name);
    if (v !== undefined && parseTimestamp(v) === undefined) details.push({ field: name, issue: TIMESTAMP_ISSUE });
  }
}

/** A job as the list shows it: settled as GET /v1/jobs/{id} shows it, unsettled as `processing` with its times. */
export function jobListItem(j: Job__Output): Record<string, unknown> {
  const job = jobView(j);
  if (isSettled(job)) return settledJobBody(job);
  return { id: job.id, kind: job.kind, status: 'processing', createdAt: job.createdAt, updatedAt: job.updatedAt };
}

export function listRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  router.get('/jobs', deps.guard('jobs/read'), async (ctx) => {
    const { params, page } = readQuery(ctx.querystring, JOB_PARAMS, (p, details) => {
      checkEnum(p, 'status', JOB_STATUS_FILTER.names, details);
      checkEnum(p, 'kind', JOB_KIND_NAMES, details);
      checkTimestamps(p, ['createdSince', 'createdBefore'], details);
    });
    const rawStatus = params.get('status');
    const status = rawStatus !== undefined && JOB_STATUS_FILTER.is(rawStatus) ? rawStatus : undefined;
    const res = await deps.clients.job.ListJobs(
      {
        ...ownerOf(ctx),
        ...page,
        ...(status ? { status: JOB_STATUS_FILTER.toProto(status) } : {}),
        kind: params.get('kind') ?? '',
        createdSince: params.get('createdSince') ?? '',
        createdBefore: params.get('createdBefore') ?? '',
      },
      grpcOptions(ctx, deps.config.grpcTimeoutMs),
    );
    ctx.body = { items: res.jobs.map(jobListItem), nextCursor: res.nextPageToken || null };
  });

  router.get('/submissions', deps.guard('submissions/read'), async (ctx) => {
    const { params, page } = readQuery(ctx.querystring, SUBMISSION_PARAMS, (p, details) => {
      const ref = p.get('externalRef');
      if (ref !== undefined && (ref === '' || [...ref].length > EXTERNAL_REF_MAX)) {
        details.push({ field: 'externalRef', issue: `must be 1-${EXTERNAL_REF_MAX} characters, matched exactly` });
      }
      checkEnum(p, 'status', SUBMISSION_STATUSES, details);
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
