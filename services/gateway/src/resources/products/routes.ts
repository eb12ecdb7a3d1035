// The product catalogue and its requirements (API.md "Products and their requirements"):
// GET /v1/products, GET /v1/products/{id}, GET /v1/products/{id}/requirements (products/read; the
// same catalogue for every partner). POST /v1/submissions/validate, which judges a create body by a
// product's requirements, is the submissions' (resources/submissions/routes.ts).
import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import { DomainError, notFound, type ErrorDetail } from '@partner/shared/domain/errors';
import { isUuid } from '@partner/shared/domain/ids';
import { requirementsFromJson } from '@partner/shared/domain/requirements';
import { submissionSchemaFor } from '@partner/shared/domain/submission-rules';
import type { Product__Output } from '@partner/shared/generated/partner/policy/v1/Product';
import { grpcOptions, type GatewayContext, type GatewayState } from '../../context.js';
import { invalidQuery, pageParams, singleParams } from '../../http/list-query.js';
import type { RouteDeps } from '../deps.js';

const LIST_PARAMS = new Set(['limit', 'cursor', 'active']);

/** The API's product record. */
export function productRecord(p: Product__Output): Record<string, unknown> {
  return {
    productId: p.productId,
    name: p.name,
    active: p.active,
    requirementsVersion: Number(p.requirementsVersion),
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
  };
}

/** GET /v1/products/{id}/requirements: the document and its generated submission schema. */
export function requirementsRecord(p: Product__Output): Record<string, unknown> {
  const requirements = requirementsFromJson(p.requirementsJson);
  const version = Number(p.requirementsVersion);
  return {
    productId: p.productId,
    version,
    submissionSchema: submissionSchemaFor({ productId: p.productId, requirementsVersion: version, requirements }),
    applicant: { required: requirements.applicant.required },
    effectiveDate: requirements.effectiveDate,
    attachments: requirements.attachments,
  };
}

function noQuery(ctx: GatewayContext): void {
  const details: ErrorDetail[] = [];
  singleParams(ctx.querystring, new Set(), details);
  if (details.length > 0) throw invalidQuery(details);
}

/** If-None-Match matches the strong tag (a list of tags, or `*`). */
function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

export function productRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  const callOptions = (ctx: GatewayContext) => grpcOptions(ctx, deps.config.grpcTimeoutMs);
  const getProduct = async (ctx: GatewayContext): Promise<Product__Output> => {
    noQuery(ctx);
    const id = ctx.params.id ?? '';
    if (!isUuid(id)) throw notFound('product');
    const { product } = await deps.clients.policy.GetProduct({ productId: id.toLowerCase() }, callOptions(ctx));
    if (!product) throw new DomainError('internal', 'internal error');
    return product;
  };

  router.get('/products', deps.guard('products/read'), async (ctx) => {
    const details: ErrorDetail[] = [];
    const params = singleParams(ctx.querystring, LIST_PARAMS, details);
    const page = pageParams(params, details);
    const active = params.get('active');
    if (active !== undefined && active !== 'true' && active !== 'false') details.push({ field: 'active', issue: 'must be true or false' });
    if (details.length > 0) throw invalidQuery(details);
    const res = await deps.clients.policy.ListProducts({ ...page, active: active ?? '' }, callOptions(ctx));
    ctx.body = { items: res.products.map(productRecord), nextCursor: res.nextPageToken || null };
  });

  router.get('/products/:id', deps.guard('products/read'), async (ctx) => {
    ctx.body = productRecord(await getProduct(ctx));
  });

  // The rendered document and its tag by product and requirements version: a partner polling with
  // If-None-Match costs the product read, not a schema generation, a serialization and a hash each time.
  const rendered = new Map<string, { json: string; etag: string }>();
  const render = (p: Product__Output): { json: string; etag: string } => {
    const key = `${p.productId}@${String(p.requirementsVersion)}`;
    let r = rendered.get(key);
    if (!r) {
      const json = JSON.stringify(requirementsRecord(p));
      // Strong: the tag changes with every byte of the body (the version alone would do, but this
      // also covers a change of the generic rules between releases).
      r = { json, etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 32)}"` };
      if (rendered.size >= 1000) rendered.delete(rendered.keys().next().value as string);
      rendered.set(key, r);
    }
    return r;
  };

  router.get('/products/:id/requirements', deps.guard('products/read'), async (ctx) => {
    const { json, etag } = render(await getProduct(ctx));
    ctx.set('ETag', etag);
    const inm = ctx.get('if-none-match');
    if (inm && matches(inm, etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json';
    ctx.body = json;
  });
}
