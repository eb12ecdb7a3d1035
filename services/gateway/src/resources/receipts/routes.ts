// Signed receipts (docs/api.md "Signed receipts"): GET /v1/receipts (the partner's chain in seq
// order) and GET /v1/submissions/{id}/receipts (one submission's), both submissions/read; and
// GET /.well-known/receipt-keys.json, every receipt public key ever used, served without a token
// (the pipeline asks receiptKeysRoute before authentication), cacheable, with an ETag.
import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { isUuid } from '@partner/shared/domain/ids';
import { isCursorShaped } from '@partner/shared/domain/list-cursor';
import { CURSOR_ISSUE } from '@partner/shared/domain/list-page';
import type { Receipt__Output } from '@partner/shared/generated/partner/submission/v1/Receipt';
import { grpcOptions, ownerOf, type GatewayContext, type GatewayState } from '../../context.js';
import { invalidQuery, pageParams, singleParams } from '../../http/list-query.js';
import type { Clients, RouteDeps } from '../deps.js';

export const RECEIPT_KEYS_PATH = '/.well-known/receipt-keys.json';
/** How long a gateway reuses the key document it read, and how long clients may cache it. */
const KEYS_CACHE_MS = 5_000;
const KEYS_MAX_AGE_S = 300;

const CHAIN_PARAMS = new Set(['limit', 'cursor', 'afterSeq']);
const SUBMISSION_PARAMS = new Set(['limit', 'cursor']);

/** A receipt as the lists show it. */
export const receiptItem = (r: Receipt__Output): Record<string, unknown> => ({
  seq: Number(r.seq),
  kind: r.kind,
  submissionId: r.submissionId,
  jws: r.jws,
  issuedAt: r.issuedAt,
});

function readQuery(querystring: string, allowed: ReadonlySet<string>): { afterSeq: number; page: { pageSize?: number; pageToken?: string } } {
  const details: ErrorDetail[] = [];
  const params = singleParams(querystring, allowed, details);
  const page = pageParams(params, details);
  if (page.pageToken !== undefined && !isCursorShaped(page.pageToken)) details.push({ field: 'cursor', issue: CURSOR_ISSUE });
  let afterSeq = 0;
  const after = params.get('afterSeq');
  if (after !== undefined) {
    if (/^[0-9]{1,15}$/.test(after)) afterSeq = Number(after);
    else details.push({ field: 'afterSeq', issue: 'must be an integer of at least 0' });
  }
  if (details.length > 0) throw invalidQuery(details);
  return { afterSeq, page };
}

export function receiptRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const list = async (ctx: GatewayContext, submissionId: string, allowed: ReadonlySet<string>) => {
    const { afterSeq, page } = readQuery(ctx.querystring, allowed);
    const r = await deps.clients.submission.ListReceipts(
      { owner: ownerOf(ctx), submissionId, afterSeq, pageSize: page.pageSize ?? 0, pageToken: page.pageToken ?? '' },
      grpcOptions(ctx, deps.config.grpcTimeoutMs),
    );
    ctx.body = { items: r.receipts.map(receiptItem), nextCursor: r.nextPageToken || null };
  };

  router.get('/receipts', deps.guard('submissions/read'), (ctx) => list(ctx, '', CHAIN_PARAMS));

  router.get('/submissions/:id/receipts', deps.guard('submissions/read'), async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isUuid(id)) throw notFound('submission');
    await list(ctx, id.toLowerCase(), SUBMISSION_PARAMS);
  });
}

/**
 * Answers GET /.well-known/receipt-keys.json (before authentication); undefined when the request is
 * for another path. The document is read from the submission service and reused for KEYS_CACHE_MS
 * (a rotated-in key appears within that); clients may cache it for KEYS_MAX_AGE_S and revalidate
 * with If-None-Match. A receipt whose kid a cached copy lacks: fetch the document again.
 */
export function receiptKeysRoute(clients: Pick<Clients, 'submission'>, grpcTimeoutMs: number): (ctx: GatewayContext) => Promise<void> | undefined {
  let cached: { body: Buffer; etag: string; until: number } | undefined;
  let loading: Promise<NonNullable<typeof cached>> | undefined;
  const load = async () => {
    const { jwksJson } = await clients.submission.GetReceiptKeys({}, { timeoutMs: grpcTimeoutMs });
    const body = Buffer.from(jwksJson);
    return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, until: Date.now() + KEYS_CACHE_MS };
  };
  return (ctx) => {
    if (ctx.path !== RECEIPT_KEYS_PATH) return undefined;
    ctx.state.route = RECEIPT_KEYS_PATH;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      throw new DomainError('method_not_allowed', `${ctx.method} is not allowed here; see the Allow header`);
    }
    return (async () => {
      if (!cached || cached.until < Date.now()) {
        loading ??= load().finally(() => (loading = undefined));
        cached = await loading;
      }
      ctx.set('Cache-Control', `public, max-age=${KEYS_MAX_AGE_S}`);
      ctx.set('ETag', cached.etag);
      if (ctx.get('If-None-Match').split(',').some((t) => t.trim() === cached!.etag)) {
        ctx.status = 304;
        return;
      }
      ctx.status = 200;
      ctx.type = 'application/jwk-set+json';
      ctx.body = cached.body;
    })();
  };
}
