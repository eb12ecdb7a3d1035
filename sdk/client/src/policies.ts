// Policies (client.policies: GET /v1/policies, GET /v1/policies/{id}): the partner's policies, read
// only. The types are generated from the OpenAPI document (wire-types.ts).
import type { Connection } from './connection.js';
import type { CallOptions } from './options.js';
import { paginate, seg, type WithResponse } from './transport.js';
import type { Page } from './types.js';
import type { ListPoliciesQuery, Policy } from './wire-types.js';

export type { Policy, PolicyStatus } from './wire-types.js';

/** GET /v1/policies's filters. */
export type PolicyListParams = ListPoliciesQuery;

export class Policies {
  constructor(private readonly connection: Connection) {}

  /** GET /v1/policies: one page. */
  async list(params: PolicyListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<Policy>>> {
    return (await this.connection.transport.request<Page<Policy>>({ method: 'GET', path: '/v1/policies', query: { ...params }, ...opts })).body;
  }

  /** Every policy matching the filters, page after page. */
  iterate(params: Omit<PolicyListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<Policy> {
    return paginate(params, (p) => this.list(p, opts));
  }

  /** GET /v1/policies/{id}. */
  async get(policyId: string, opts: CallOptions = {}): Promise<WithResponse<Policy>> {
    return (await this.connection.transport.request<Policy>({ method: 'GET', path: `/v1/policies/${seg(policyId)}`, ...opts })).body;
  }
}
