// POST /v1/submissions (submissions/write; a job) and GET /v1/submissions/{id} (submissions/read).
import type Router from '@koa/router';
import { normalizeApplicant, type Applicant } from '@partner/shared/domain/applicant';
import { submissionCreateSchema } from '@partner/shared/domain/submission-rules';
import { isUuid } from '@partner/shared/domain/ids';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { grpcOptions, ownerOf, type GatewayState } from '../context.js';
import { DomainError, notFound } from '@partner/shared/domain/errors';
import { sandboxIssue } from '@partner/shared/domain/sandbox';
import { readJson } from '../http/body.js';
import { validator } from '../http/validate.js';
import type { RouteDeps } from './deps.js';
import { runMutation } from '../jobs/mutations.js';
import { submissionRecord } from '@partner/shared/domain/submission-record';
import { contentSha256 } from '../receipts/content-hash.js';

export interface SubmissionCreate {
  externalRef: string;
  submissionType: 'application';
  effectiveDate: string;
  productId: string;
  applicant: Applicant;
}

/** A value that looks like a UAT sandbox directive must be a valid one, never a real submission. */
function checkSandbox(externalRef: string): void {
  const issue = sandboxIssue(externalRef);
  if (!issue) return;
  throw new DomainError('validation_error', 'the request body is invalid; see details', { details: [{ field: 'externalRef', issue }] });
}


export function submissionRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const validateCreate = validator<SubmissionCreate>(submissionCreateSchema);

  router.post('/submissions', deps.guard('submissions/write'), async (ctx) => {
    const body = validateCreate(await readJson(ctx, deps.config.jsonLimitBytes));
    if (deps.config.environment === 'uat') checkSandbox(body.externalRef);
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
      const { submission: s } = await deps.clients.submission.GetSubmission(
        { owner: ownerOf(ctx), submissionId: id.toLowerCase() },
        grpcOptions(ctx, deps.config.grpcTimeoutMs),
      );
      ctx.body = submissionRecord(s!);
    },
  );
}
