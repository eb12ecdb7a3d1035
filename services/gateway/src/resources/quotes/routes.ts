// Quotes (API.md "Quotes, underwriting referrals, bind and issue"): POST /v1/submissions/{id}/quotes
// (quotes/write; a job, quote.create), GET /v1/quotes/{id} and GET /v1/submissions/{id}/quotes
// (quotes/read; answered by the policy service), and in UAT POST /v1/test_helpers/quotes/{id}/decide
// (quotes/write; a job, quote.decide; in production the path does not exist: 404). The options are
// checked here, before any job exists: 1 to 5, limit and retention decimal strings, no two alike (400
// naming `options`); whether the plan offers them is the job's (422 option_not_offered).
import type Router from '@koa/router';
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { isUuid } from '@partner/shared/domain/ids';
import { JOB_KINDS } from '@partner/shared/domain/jobs';
import { MAX_QUOTE_OPTIONS, QUOTE_STATUSES, type QuoteRecord } from '@partner/shared/domain/quotes';
import { grpcOptions, ownerOf, type GatewayContext, type GatewayState } from '../../context.js';
import { readJson } from '../../http/body.js';
import { checkEnum, invalidQuery, pageParams, singleParams } from '../../http/list-query.js';
import { validator } from '../../http/validate.js';
import { runMutation } from '../../jobs/mutations.js';
import type { RouteDeps } from '../deps.js';
import { requireOwn } from '../own.js';

/** A limit or retention: a non-negative decimal string naming a key of the plan's tables. */
export const OPTION_AMOUNT_PATTERN = '^(0|[1-9][0-9]{0,14})(\\.[0-9]{1,2})?$';
export const PREMIUM_PATTERN = OPTION_AMOUNT_PATTERN;
export const DECIDE_NOTE_MAX = 500;

export const quoteRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['options'],
  properties: {
    options: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_QUOTE_OPTIONS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['limit', 'retention'],
        properties: {
          limit: { type: 'string', pattern: OPTION_AMOUNT_PATTERN, maxLength: 18 },
          retention: { type: 'string', pattern: OPTION_AMOUNT_PATTERN, maxLength: 18 },
        },
      },
    },
  },
} as const;

export const decideSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['outcome'],
  properties: {
    outcome: { type: 'string', enum: ['approved', 'declined'] },
    premium: { type: 'string', pattern: PREMIUM_PATTERN, maxLength: 18 },
    note: { type: 'string', minLength: 1, maxLength: DECIDE_NOTE_MAX },
  },
} as const;

interface QuoteRequest {
  options: { limit: string; retention: string }[];
}
interface Decide {
  outcome: 'approved' | 'declined';
  premium?: string;
  note?: string;
}

/** The schema's problems with the options, every one named `options` (the issue says which item and part). */
function optionsDetails(err: unknown): never {
  if (err instanceof DomainError && err.details) {
    const details = err.details.map((d): ErrorDetail => {
      const m = /^options(?:\.(\d+))?(?:\.(\w+))?$/.exec(d.field);
      if (!m) return d;
      const where = m[1] === undefined ? '' : `options[${m[1]}]${m[2] ? `.${m[2]}` : ''} `;
      const issue = m[2] && d.issue.startsWith('must match') ? 'must be a decimal string such as "1000000"' : d.issue;
      return { field: 'options', issue: `${where}${issue}`.trim() };
    });
    throw new DomainError(err.code, err.message, { details });
  }
  throw err;
}

export function parseQuoteRequest(body: unknown, validate: (b: unknown) => QuoteRequest): QuoteRequest {
  let req: QuoteRequest;
  try {
    req = validate(body);
  } catch (err) {
    optionsDetails(err);
  }
  const seen = new Map<string, number>();
  const details: ErrorDetail[] = [];
  req.options.forEach((o, i) => {
    const key = `${o.limit}/${o.retention}`;
    const first = seen.get(key);
    if (first !== undefined) details.push({ field: 'options', issue: `options[${i}] repeats options[${first}] (${key})` });
    else seen.set(key, i);
  });
  if (details.length > 0) throw new DomainError('validation_error', 'the request body is invalid; see details', { details });
  return { options: req.options.map((o) => ({ limit: o.limit, retention: o.retention })) };
}

const recordOf = (q: { recordJson: string } | null | undefined): QuoteRecord => {
  if (!q) throw new DomainError('internal', 'internal error');
  return JSON.parse(q.recordJson) as QuoteRecord;
};

export function quoteRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const validate = validator<QuoteRequest>(quoteRequestSchema);
  const validateDecide = validator<Decide>(decideSchema);
  const options = (ctx: GatewayContext) => grpcOptions(ctx, deps.config.grpcTimeoutMs);
  const noQuery = (ctx: GatewayContext) => {
    const details: ErrorDetail[] = [];
    singleParams(ctx.querystring, new Set(), details);
    if (details.length > 0) throw invalidQuery(details);
  };

  router.post('/submissions/:id/quotes', deps.guard('quotes/write'), async (ctx) => {
    const raw = ctx.params.id ?? '';
    if (!isUuid(raw)) throw notFound('submission');
    const submissionId = raw.toLowerCase();
    const body = parseQuoteRequest(await readJson(ctx, deps.config.jsonLimitBytes), validate);
    // Another partner's submission (or none): 404 at once, nothing queued.
    await requireOwn(ctx, deps, 'submission', submissionId);
    const payload = { submissionId, options: body.options };
    await runMutation(ctx, deps, { kind: JOB_KINDS.quoteCreate, payload, ids: { id: submissionId }, fingerprintOf: payload });
  });

  router.get('/submissions/:id/quotes', deps.guard('quotes/read'), async (ctx) => {
    const details: ErrorDetail[] = [];
    const params = singleParams(ctx.querystring, new Set(['limit', 'cursor', 'status']), details);
    const page = pageParams(params, details);
    checkEnum(params, 'status', QUOTE_STATUSES, details);
    if (details.length > 0) throw invalidQuery(details);
    const raw = ctx.params.id ?? '';
    if (!isUuid(raw)) throw notFound('submission');
    const submissionId = raw.toLowerCase();
    // The submission must be the caller's (an unknown one is 404, not an empty list).
    await requireOwn(ctx, deps, 'submission', submissionId);
    const res = await deps.clients.policy.ListQuotes({ owner: ownerOf(ctx), submissionId, ...page, status: params.get('status') ?? '' }, options(ctx));
    ctx.body = { items: res.quotes.map(recordOf), nextCursor: res.nextPageToken || null };
  });

  router.get('/quotes/:id', deps.guard('quotes/read'), async (ctx) => {
    noQuery(ctx);
    const id = ctx.params.id ?? '';
    if (!isUuid(id)) throw notFound('quote');
    const owner = ownerOf(ctx);
    const quoteId = id.toLowerCase();
    const res = await deps.clients.policy.GetQuote({ owner, quoteId }, options(ctx));
    deps.waiters.knownResources.remember(owner, 'quote', quoteId);
    ctx.body = recordOf(res.quote);
  });

  // A test helper: UAT only. In production the route is not registered, so the path is an unknown one (404).
  if (deps.config.environment === 'uat') {
    router.post('/test_helpers/quotes/:id/decide', deps.guard('quotes/write'), async (ctx) => {
      const raw = ctx.params.id ?? '';
      if (!isUuid(raw)) throw notFound('quote');
      const quoteId = raw.toLowerCase();
      const body = validateDecide(await readJson(ctx, deps.config.jsonLimitBytes));
      if (body.outcome === 'declined' && body.premium !== undefined) {
        throw new DomainError('validation_error', 'the request body is invalid; see details', { details: [{ field: 'premium', issue: 'only an approval sets a premium' }] });
      }
      // Another partner's quote (or none): 404 at once, nothing queued.
      await requireOwn(ctx, deps, 'quote', quoteId);
      const payload = { quoteId, outcome: body.outcome, ...(body.premium !== undefined ? { premium: body.premium } : {}), ...(body.note !== undefined ? { note: body.note } : {}) };
      await runMutation(ctx, deps, { kind: JOB_KINDS.quoteDecide, payload, ids: { id: quoteId }, fingerprintOf: payload });
    });
  }
}
