// The request-log writer's store (services/events/src/request-log/writer.ts), against the events
// service's own database: a batch goes in with one COPY, and every value comes back exactly as the
// gateway wrote it, whatever bytes COPY's text format gives a meaning to (tab, newline, carriage
// return, backslash, a field that reads \N); a batch delivered again (after a lost ack) stores each
// entry once, the new ones too, and is counted.
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { newRequestLogId, type RequestLogEntry } from '@partner/shared/domain/request-log';
import { requestLogWriterMetrics } from '../services/events/src/request-log/metrics.js';
import { RequestLogWriter } from '../services/events/src/request-log/writer.js';
import { parseMetrics } from './support/metrics.js';
import { useStack } from './support/use-stack.js';

const HOSTILE = 'tab\there, line\nfeed, return\r, back\\slash, \\N, \\., \\t, end\\';

function entry(over: Partial<RequestLogEntry> = {}): RequestLogEntry {
  const at = Date.parse('2026-11-28T12:00:00.000Z') + Math.floor(Math.random() * 1000);
  return {
    id: newRequestLogId(at),
    tenantId: 'writer-test',
    partnerId: 'p1',
    requestId: `rid-${Math.random()}`,
    method: 'GET',
    path: '/v1/jobs/job_x',
    query: null,
    status: 200,
    durationMs: 1.5,
    clientId: 'cli_x',
    principalId: null,
    idempotencyKey: null,
    idempotentReplayed: false,
    jobId: null,
    errorCode: null,
    createdAt: new Date(at).toISOString(),
    requestHeaders: { 'user-agent': 'plain/1.0' },
    requestBodyJson: null,
    requestBodyTruncated: false,
    requestBodySizeBytes: null,
    responseBodyJson: '{"ok":true}',
    responseBodyTruncated: false,
    responseBodySizeBytes: 11,
    answeredAtMs: at,
    ...over,
  };
}

describe('the request-log writer', () => {
  const stack = useStack(async (s) => {
    await s.startEvents();
  });

  function writer(registry = new Registry()) {
    const pool = stack.services.events!.pool!;
    const w = new RequestLogWriter({
      store: pool,
      ddl: pool,
      nc: undefined as never, // store() publishes and consumes nothing
      names: undefined as never,
      logger: stack.logger,
      metrics: requestLogWriterMetrics(registry),
      maxDeliver: 3,
      retryDelayMs: 100,
    });
    return { w, storedAgain: async () => parseMetrics(await registry.metrics()).sum('partner_request_log_batches_stored_again_total') };
  }

  const stored = (ids: string[]) =>
    stack.sql<Record<string, unknown>>(
      `SELECT 'req_' || replace(id::text, '-', '') AS id, request_id, path, query, idempotency_key, principal_id, error_code, status, duration_ms,
              idempotent_replayed, request_headers::text AS request_headers, request_body::text AS request_body, response_body::text AS response_body,
              request_body_size_bytes, response_body_truncated, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
         FROM events.request_log WHERE id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [ids.map((id) => id.slice(4).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'))],
    );

  it('stores every value exactly as written, the bytes COPY reads as escapes and separators included', async () => {
    const { w, storedAgain } = writer();
    const hostile = entry({
      requestId: `rid ${HOSTILE}`,
      path: `/v1/${HOSTILE}`,
      query: `q=${HOSTILE}`,
      idempotencyKey: HOSTILE,
      principalId: '\\N',
      errorCode: '',
      status: 422,
      idempotentReplayed: true,
      requestHeaders: { 'user-agent': HOSTILE, 'x-unicode': 'ünïcødé ✓ 🚀 \u2028' },
      requestBodyJson: JSON.stringify({ note: HOSTILE, raw: 'a\tb' }),
      requestBodySizeBytes: 123,
      responseBodyJson: JSON.stringify(HOSTILE),
      responseBodyTruncated: true,
    });
    const plain = entry();
    await w.store([hostile, plain]);
    const rows = await stored([hostile.id, plain.id]);
    expect(rows).toHaveLength(2);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(hostile.id)).toEqual({
      id: hostile.id,
      request_id: hostile.requestId,
      path: hostile.path,
      query: hostile.query,
      idempotency_key: HOSTILE,
      principal_id: '\\N',
      error_code: '',
      status: 422,
      duration_ms: 1.5,
      idempotent_replayed: true,
      request_headers: JSON.stringify(hostile.requestHeaders),
      request_body: hostile.requestBodyJson,
      response_body: hostile.responseBodyJson,
      request_body_size_bytes: 123,
      response_body_truncated: true,
      created_at: hostile.createdAt,
    });
    // Nulls stay nulls, and the next row is whole and its own.
    expect(byId.get(plain.id)).toMatchObject({ request_id: plain.requestId, query: null, idempotency_key: null, principal_id: null, request_body: null, response_body: '{"ok":true}', status: 200 });
    expect(await storedAgain()).toBe(0);
  });

  it('stores a batch delivered again once, with the entries it did not hold before, and counts it', async () => {
    const { w, storedAgain } = writer();
    const first = [entry(), entry({ query: 'a=1' })];
    await w.store(first);
    const again = [...first, entry({ path: '/v1/new' })];
    await w.store(again);
    const rows = await stored(again.map((e) => e.id));
    expect(rows.map((r) => r.id).sort()).toEqual(again.map((e) => e.id).sort());
    expect(await storedAgain()).toBe(1);
  });
});
