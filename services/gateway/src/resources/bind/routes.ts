// POST /v1/quotes/{id}/bind (quotes/write; a job, quote.bind): the partner accepts the terms of an
// open quote, named by the SHA-256 of its offer JWS. The job's result is the policy issued; its
// failures, in this order: 409 quote_not_open (details: the quote's status), 409 offer_changed,
// 409 not_quotable (a withdrawn submission). Exactly one bind of a submission wins (docs/api.md
// "Bind races"); the worker runs it as idempotent steps keyed by the job id (services/worker/src/bind.ts).
import type Router from '@koa/router';
import { isUuid } from '@partner/shared/domain/ids';
import { notFound } from '@partner/shared/domain/errors';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import type { GatewayState } from '../../context.js';
import { readJson } from '../../http/body.js';
import { validator } from '../../http/validate.js';
import { runMutation } from '../../jobs/mutations.js';
import type { RouteDeps } from '../deps.js';
import { requireOwn } from '../own.js';

export interface QuoteBind {
  offerSha256: string;
}

export const quoteBindSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['offerSha256'],
  properties: {
    offerSha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  },
} as const;

export function bindRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const validate = validator<QuoteBind>(quoteBindSchema);

  router.post('/quotes/:id/bind', deps.guard('quotes/write'), async (ctx) => {
    const raw = ctx.params.id ?? '';
    if (!isUuid(raw)) throw notFound('quote');
    const quoteId = raw.toLowerCase();
    const body = validate(await readJson(ctx, deps.config.jsonLimitBytes));
    // An unknown quote or another partner's: 404 at once, nothing queued (the job's CheckBind checks again).
    await requireOwn(ctx, deps, 'quote', quoteId);
    const payload = { quoteId, offerSha256: body.offerSha256 };
    await runMutation(ctx, deps, { kind: JOB_KINDS.quoteBind, payload, ids: { id: quoteId }, fingerprintOf: payload });
  });
}
