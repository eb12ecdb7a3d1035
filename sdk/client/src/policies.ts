// Policies (client.policies: GET /v1/policies, GET /v1/policies/{id}): the partner's policies, read
// only. The types are generated from the OpenAPI document (wire-types.ts).
import type { Connection } from './connection.js';
import type { CallOptions } from './options.js';
import { paginate, seg, type WithResponse } from './transport.js';
import type { Page } from './types.js';
import type { ListPoliciesQuery, Policy, PolicyDocumentList } from './wire-types.js';

export type { Policy, PolicyDocument, PolicyStatus } from './wire-types.js';

/** A policy document's bytes as a stream, with what the response says of them. */
export interface PolicyDocumentDownload {
  body: ReadableStream<Uint8Array>;
  contentType: string;
  contentLength: number | undefined;
  /** Hex sha256 of the bytes, from the ETag (compare it with the document's `sha256` and the policy.issued receipt). */
  sha256: string | undefined;
}

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

  /** GET /v1/policies/{id}/documents: the policy's documents (a bound policy's declarations PDF). */
  async documents(policyId: string, opts: CallOptions = {}): Promise<WithResponse<PolicyDocumentList>> {
    return (await this.connection.transport.request<PolicyDocumentList>({ method: 'GET', path: `/v1/policies/${seg(policyId)}/documents`, ...opts })).body;
  }

  /** GET /v1/policies/{id}/documents/{documentId}/content: the bytes as a stream (read it, or cancel it). */
  async downloadDocument(policyId: string, documentId: string, opts: CallOptions = {}): Promise<PolicyDocumentDownload> {
    const res = await this.connection.transport.request<ReadableStream<Uint8Array>>({
      method: 'GET',
      path: `/v1/policies/${seg(policyId)}/documents/${seg(documentId)}/content`,
      stream: true,
      ...opts,
    });
    const length = res.headers.get('content-length');
    const etag = res.headers.get('etag');
    return {
      body: res.body,
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      contentLength: length !== null && /^\d+$/.test(length) ? Number(length) : undefined,
      sha256: etag ? etag.replace(/^W\//, '').replace(/"/g, '') : undefined,
    };
  }
}
