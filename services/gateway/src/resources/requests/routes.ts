// GET /v1/requests (requests/read): the calling partner's request log, newest first, for "what did
// our integration send, what came back, was it a replay?" (docs/api.md "Request log"). The query
// string is validated here, every bad parameter reported at once (400 validation_error); the events
// service checks the same rules again and owns the cursors (signed, bound to partner and filters).
// GET /v1/requests/{id} (requests/read): one entry with its allow-listed headers and redacted bodies;
// another partner's entry is 404. Neither read is itself logged (request-log/recorder.ts).
import type Router from '@koa/router';
import { notFound } from '@partner/shared/domain/errors';
import { isRequestLogId, parseStatusFilter, REQUEST_LOG_METHODS, STATUS_FILTER_ISSUE } from '@partner/shared/domain/request-log';
import type { RequestLogEntry__Output } from '@partner/shared/generated/partner/events/v1/RequestLogEntry';
import { grpcOptions, ownerOf, type GatewayState } from '../../context.js';
import { checkEnum, checkTimestamps, readListQuery } from '../../http/list-query.js';
import type { RouteDeps } from '../deps.js';

const PARAMS = new Set(['limit', 'cursor', 'status', 'method', 'pathPrefix', 'idempotencyKey', 'requestId', 'jobId', 'createdSince', 'createdBefore']);

/** An entry as the list shows it (absent values null). */
export function requestListItem(e: RequestLogEntry__Output): Record<string, unknown> {
  return {
    id: e.id,
    requestId: e.requestId,
    method: e.method,
    path: e.path,
    query: e.query ?? null,
    status: e.status,
    durationMs: e.durationMs,
    clientId: e.clientId,
    principalId: e.principalId ?? null,
    idempotencyKey: e.idempotencyKey ?? null,
    idempotentReplayed: e.idempotentReplayed,
    jobId: e.jobId ?? null,
    errorCode: e.errorCode ?? null,
    createdAt: e.createdAt,
  };
}

const parse = (text: string): unknown => (text === '' ? null : JSON.parse(text));

/** An entry as GET /v1/requests/{id} shows it: the list's fields, its headers and bodies. */
export function requestDetail(e: RequestLogEntry__Output): Record<string, unknown> {
  return {
    ...requestListItem(e),
    requestHeaders: parse(e.requestHeadersJson) ?? {},
    requestBody: parse(e.requestBodyJson),
    requestBodyTruncated: e.requestBodyTruncated,
    requestBodySizeBytes: e.requestBodySizeBytes === undefined || e.requestBodySizeBytes === null ? null : Number(e.requestBodySizeBytes),
    responseBody: parse(e.responseBodyJson),
    responseBodyTruncated: e.responseBodyTruncated,
    responseBodySizeBytes: e.responseBodySizeBytes === undefined || e.responseBodySizeBytes === null ? null : Number(e.responseBodySizeBytes),
  };
}

export function requestRoutes(router: Router<GatewayState>, deps: RouteDeps): void {
  router.get('/requests', deps.guard('requests/read'), async (ctx) => {
    const { params, page } = readListQuery(ctx.querystring, PARAMS, (p, details) => {
      const status = p.get('status');
      if (status !== undefined && !parseStatusFilter(status)) details.push({ field: 'status', issue: STATUS_FILTER_ISSUE });
      checkEnum(p, 'method', REQUEST_LOG_METHODS, details);
      const prefix = p.get('pathPrefix');
      if (prefix !== undefined && !prefix.startsWith('/')) details.push({ field: 'pathPrefix', issue: 'must start with "/" (e.g. /v1/submissions)' });
      checkTimestamps(p, ['createdSince', 'createdBefore'], details);
    });
    const res = await deps.clients.events.ListRequests(
      {
        owner: ownerOf(ctx),
        ...page,
        status: params.get('status') ?? '',
        method: params.get('method') ?? '',
        pathPrefix: params.get('pathPrefix') ?? '',
        idempotencyKey: params.get('idempotencyKey') ?? '',
        requestId: params.get('requestId') ?? '',
        jobId: params.get('jobId') ?? '',
        createdSince: params.get('createdSince') ?? '',
        createdBefore: params.get('createdBefore') ?? '',
      },
      grpcOptions(ctx, deps.config.grpcTimeoutMs),
    );
    ctx.body = { items: res.entries.map(requestListItem), nextCursor: res.nextPageToken || null };
  });

  router.get('/requests/:id', deps.guard('requests/read'), async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isRequestLogId(id)) throw notFound('request');
    const res = await deps.clients.events.GetRequest({ owner: ownerOf(ctx), id }, grpcOptions(ctx, deps.config.grpcTimeoutMs));
    ctx.body = requestDetail(res.entry!);
  });
}
