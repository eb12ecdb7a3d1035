// The request log (client.requests: GET /v1/requests, GET /v1/requests/{id}): what the partner's
// integration sent, what came back, and whether it was a replay — redacted (no Authorization,
// cookies, secrets or attachment bytes; tax ids masked). The types are generated from the OpenAPI
// document (wire-types.ts).
import type { Connection } from './connection.js';
import type { CallOptions } from './options.js';
import { paginate, seg, type WithResponse } from './transport.js';
import type { Page } from './types.js';
import type { ListRequestsQuery, RequestLogEntry, RequestLogItem } from './wire-types.js';

export type { RequestLogEntry, RequestLogItem } from './wire-types.js';

/**
 * GET /v1/requests's filters: `status` a class (`2xx`, `4xx`, `5xx`) or an exact code (`'409'`),
 * `idempotencyKey` (a request and its replays), `requestId` (the X-Request-Id it sent), `jobId`,
 * `method`, `pathPrefix`, `createdSince` / `createdBefore`.
 */
export type RequestLogListParams = ListRequestsQuery;

export class Requests {
  constructor(private readonly connection: Connection) {}

  /** GET /v1/requests: one page of the partner's requests, newest first. */
  async list(params: RequestLogListParams = {}, opts: CallOptions = {}): Promise<WithResponse<Page<RequestLogItem>>> {
    return (await this.connection.transport.request<Page<RequestLogItem>>({ method: 'GET', path: '/v1/requests', query: { ...params }, ...opts })).body;
  }

  /** Every request matching the filters, page after page. */
  iterate(params: Omit<RequestLogListParams, 'cursor'> = {}, opts: CallOptions = {}): AsyncGenerator<RequestLogItem> {
    return paginate(params, (p) => this.list(p, opts));
  }

  /** GET /v1/requests/{id}: one request with its headers and (redacted) bodies. */
  async get(requestLogId: string, opts: CallOptions = {}): Promise<WithResponse<RequestLogEntry>> {
    return (await this.connection.transport.request<RequestLogEntry>({ method: 'GET', path: `/v1/requests/${seg(requestLogId)}`, ...opts })).body;
  }
}
