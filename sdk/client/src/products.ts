// Products and their requirements (GET /v1/products, /v1/products/{id}, /v1/products/{id}/requirements)
// and the dry run of a submission (POST /v1/submissions/validate). Requirements are cached per
// product by their ETag: a repeated call sends If-None-Match and a 304 answers from the cache.
import type { CallOptions } from './options.js';
import { paginate, seg, type Transport, type WithResponse } from './transport.js';
import type { Page, PageParams } from './types.js';

/** A product of the catalogue (the same for every partner). */
export interface Product {
  productId: string;
  name: string;
  active: boolean;
  requirementsVersion: number;
  createdAt: string;
  updatedAt: string;
}

export interface ProductListParams extends PageParams {
  /** Only active (true) or inactive (false) products. */
  active?: boolean;
}

export interface AttachmentRule {
  documentType: string;
  min: number;
  max: number | null;
  mediaTypes: string[];
  maxBytes: number | null;
}

/** What a product accepts: a JSON Schema 2020-12 of the create body, and the rules no schema can say. */
export interface ProductRequirements {
  productId: string;
  version: number;
  /** Validate a create body offline with any JSON Schema 2020-12 validator (e.g. Ajv 2020). */
  submissionSchema: Record<string, unknown>;
  applicant: { required: ('taxId' | 'address')[] };
  /** Days after today (UTC) the effective date must lie within; null: any date. */
  effectiveDate: { minDaysAhead: number | null; maxDaysAhead: number | null } | null;
  attachments: AttachmentRule[];
}

export interface ValidationError {
  /** The body field (`applicant.taxId`, `effectiveDate`, …). */
  field: string;
  code: 'required' | 'unknown_field' | 'invalid' | 'out_of_window' | 'unknown_product' | 'invalid_sandbox_directive' | (string & {});
  message: string;
}

/** POST /v1/submissions/validate: whether a create with this body would succeed now, and if not why. */
export interface ValidationResult {
  valid: boolean;
  errors: ValidationError[];
  requirementsVersion: number | null;
}

export class Products {
  private readonly requirementsCache = new Map<string, { etag: string; value: WithResponse<ProductRequirements> }>();

  constructor(private readonly transport: Transport) {}

  async list(params: ProductListParams, opts: CallOptions): Promise<WithResponse<Page<Product>>> {
    const { active, ...rest } = params;
    const query = { ...rest, ...(active !== undefined ? { active: String(active) } : {}) };
    return (await this.transport.request<Page<Product>>({ method: 'GET', path: '/v1/products', query, ...opts })).body;
  }

  iterate(params: Omit<ProductListParams, 'cursor'>, opts: CallOptions): AsyncGenerator<Product> {
    return paginate(params, (p) => this.list(p, opts));
  }

  async get(productId: string, opts: CallOptions): Promise<WithResponse<Product>> {
    return (await this.transport.request<Product>({ method: 'GET', path: `/v1/products/${seg(productId)}`, ...opts })).body;
  }

  /** The product's requirements; unchanged ones come from the cache (If-None-Match, 304). */
  async requirements(productId: string, opts: CallOptions): Promise<WithResponse<ProductRequirements>> {
    const key = productId.toLowerCase();
    const cached = this.requirementsCache.get(key);
    const answer = await this.transport.request<ProductRequirements>({
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

  async validate(body: unknown, opts: CallOptions): Promise<WithResponse<ValidationResult>> {
    return (await this.transport.request<ValidationResult>({ method: 'POST', path: '/v1/submissions/validate', json: body, ...opts })).body;
  }
}
