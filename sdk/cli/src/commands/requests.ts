// `partner requests list|show`: the request log — what your integration sent, what came back, and
// whether it was a replay (redacted: no Authorization, cookies, secrets or attachment bytes; tax ids
// masked). `show` prints the headers and pretty-printed bodies.
import type { RequestLogEntry, RequestLogItem, RequestLogListParams } from '@partner/sdk';
import { EXIT, intOption, showList, UsageError, type Command } from '../command.js';

const STATUS = /^(?:[245]xx|[1-5][0-9]{2})$/;

/** A stored body for people: JSON indented, a truncated body's text as it is, with a note. */
export function prettyBody(body: unknown, truncated: boolean, sizeBytes: number | null): string {
  if (body === null) return sizeBytes ? `(not JSON, ${sizeBytes} bytes)` : '(none)';
  if (truncated && typeof body === 'string') return `${body}\n… (truncated at 16 KiB of ${sizeBytes ?? '?'} bytes)`;
  return JSON.stringify(body, null, 2);
}

export const REQUEST_COMMANDS: Record<string, Command> = {
  'requests list': {
    usage: 'requests list [--idempotency-key K] [--status 2xx|4xx|5xx|CODE] [--request-id R] [--created-since TS] [--created-before TS] [--limit N] [--cursor C] [--all]',
    summary: 'the requests your integration sent, newest first: find a request and its replays by key, one by its X-Request-Id, the failures by status',
    examples: [
      'partner requests list --idempotency-key 2f1c9a52-8d7e-4c11-b1a4-5f3e9d7c6b21',
      'partner requests list --status 4xx --created-since 2026-11-27T00:00:00Z',
      'partner requests list --request-id acme-7f3a9c --json',
    ],
    args: [],
    options: ['idempotency-key', 'status', 'request-id', 'created-since', 'created-before', 'limit', 'cursor', 'all'],
    run: async (ctx) => {
      const v = ctx.values;
      if (v.status !== undefined && !STATUS.test(v.status)) throw new UsageError('--status must be 2xx, 4xx, 5xx or an HTTP status code (e.g. 409)');
      const limit = intOption(v, 'limit');
      const params: RequestLogListParams = {
        ...(v['idempotency-key'] ? { idempotencyKey: v['idempotency-key'] } : {}),
        ...(v.status ? { status: v.status } : {}),
        ...(v['request-id'] ? { requestId: v['request-id'] } : {}),
        ...(v['created-since'] ? { createdSince: v['created-since'] } : {}),
        ...(v['created-before'] ? { createdBefore: v['created-before'] } : {}),
        ...(limit !== undefined ? { limit } : {}),
      };
      const requests = ctx.client().requests;
      return showList<RequestLogItem>(
        ctx,
        (cursor) => requests.list({ ...params, ...(cursor ? { cursor } : {}) }, { signal: ctx.signal }),
        () => requests.iterate(params, { signal: ctx.signal }),
        [
          ['id', 'id'],
          ['createdAt', 'created'],
          ['method', 'method'],
          ['path', 'path'],
          ['status', 'status'],
          ['errorCode', 'error'],
          ['idempotentReplayed', 'replay'],
          ['requestId', 'request id'],
        ],
      );
    },
  },
  'requests show': {
    usage: 'requests show REQUEST_LOG_ID',
    summary: 'one request of the log: what was sent (headers, body) and what came back, bodies pretty-printed',
    examples: ['partner requests show req_019ab0e47c1d7b529a0e3f2d4c5b6a72', 'partner requests show req_019ab0e47c1d7b529a0e3f2d4c5b6a72 --json'],
    args: ['REQUEST_LOG_ID'],
    options: [],
    run: async (ctx, [id]) => {
      const entry: RequestLogEntry = await ctx.client().requests.get(id!, { signal: ctx.signal });
      if (ctx.out.json) {
        ctx.out.writeJson(entry);
        return EXIT.ok;
      }
      const { requestHeaders, requestBody, requestBodyTruncated, requestBodySizeBytes, responseBody, responseBodyTruncated, responseBodySizeBytes, ...item } = entry;
      ctx.out.record(item);
      ctx.out.section('request headers', JSON.stringify(requestHeaders, null, 2));
      ctx.out.section('request body', prettyBody(requestBody, requestBodyTruncated, requestBodySizeBytes));
      ctx.out.section('response body', prettyBody(responseBody, responseBodyTruncated, responseBodySizeBytes));
      return EXIT.ok;
    },
  },
};
