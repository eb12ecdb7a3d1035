// Policies (GET /v1/policies, GET /v1/policies/{id}): the partner's policies, read only.
import type { CallOptions } from './options.js';
import { paginate, seg, type Transport, type WithResponse } from './transport.js';
import type { Page, Policy, PolicyListParams } from './types.js';

export class Policies {
  constructor(private readonly transport: Transport) {}

  async list(params: PolicyListParams, opts: CallOptions): Promise<WithResponse<Page<Policy>>> {
    return (await this.transport.request<Page<Policy>>({ method: 'GET', path: '/v1/policies', query: { ...params }, ...opts })).body;
  }

  iterate(params: Omit<PolicyListParams, 'cursor'>, opts: CallOptions): AsyncGenerator<Policy> {
    return paginate(params, (p) => this.list(p, opts));
  }

  async get(policyId: string, opts: CallOptions): Promise<WithResponse<Policy>> {
    return (await this.transport.request<Policy>({ method: 'GET', path: `/v1/policies/${seg(policyId)}`, ...opts })).body;
  }
}
