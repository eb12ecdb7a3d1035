// Products and their requirements (client.products: GET /v1/products, /v1/products/{id},
// /v1/products/{id}/requirements). Requirements are cached per product by their ETag: a repeated call
// sends If-None-Match and a 304 answers from the cache. The types are generated from the OpenAPI
// document (wire-types.ts); the dry run of a create is client.submissions.validate.
import type { Connection } from './connection.js';
import type { CallOptions } from './options.js';
import { paginate, seg, type WithResponse } from './transport.js';
import type { Page } from './types.js';
import type { ListProductsQuery, Product, ProductRequirements } from './wire-types.js';

export type { AttachmentRule, Product, ProductRequirements } from './wire-types.js';

/** GET /v1/products's filters: `active` only active (true) or inactive (false) products. */
export interface ProductListParams extends Omit<ListProductsQuery, 'active'> {
  active?: boolean;
}

export class Products {
  private readonly requirementsCache = new Map<string, { etag: string; value: WithResponse<ProductRequirements> }>();

  constructor(private readonly connection: Connection) {}

  /** GET /v1/products: one page of the catalogue (the same for every partner). */
  async list(params: ProductListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<Product>>> {
    const { active, ...rest } = params;
    const query = { ...rest, ...(active !== undefined ? { active: String(active) } : {}) };
    return (await this.connection.transport.request<Page<Product>>({ method: 'GET', path: '/v1/products', query, ...opts })).body;
  }

  /** Every product, page after page. */
  iterate(params: Omit<ProductListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Product> {
    return paginate(params, (p) => this.list(p, opts));
  }

  /** GET /v1/products/{id}. */
  async get(productId: string, opts: CallOptions = {}): Promise<WithResponse<Product>> {
    return (await this.connection.transport.request<Product>({ method: 'GET', path: `/v1/products/${seg(productId)}`, ...opts })).body;
  }

  /** GET /v1/products/{id}/requirements, cached by ETag: unchanged ones come from the cache (If-None-Match, 304). */
  async requirements(productId: string, opts: CallOptions = {}): Promise<WithResponse<ProductRequirements>> {
    const key = productId.toLowerCase();
    const cached = this.requirementsCache.get(key);
    const answer = await this.connection.transport.request<ProductRequirements>({
      method: 'GET',
      path: `/v1/products/${seg(productId)}/requirements`,
      ...(cached ? { headers: { 'if-none-match': cached.etag } } : {}),
      notModified: true,
      ...opts,
    });
    if (answer.status === 304 && cached) return cached.value;
    const etag = answer.headers.get('etag');
    if (etag) {
      if (this.requirementsCache.size >= 100) this.requirementsCache.delete(this.requirementsCache.keys().next().value as string);
      this.requirementsCache.set(key, { etag, value: answer.body });
    }
    return answer.body;
  }
}
