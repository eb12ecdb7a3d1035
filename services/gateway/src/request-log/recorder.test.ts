// The recorder's bounds: what it records (authenticated /v1 requests, not the log's reads or the
// document), a full buffer and a missing NATS connection dropping entries and counting them, never
// throwing into the request.
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createLogger } from '@partner/shared/telemetry/logger';
import type { GatewayContext } from '../context.js';
import { RequestRecorder, requestLogMetrics } from './recorder.js';

const logger = createLogger('test', 'silent');

function ctxOf(path: string, opts: { caller?: boolean } = {}): GatewayContext {
  const headers: Record<string, string> = { authorization: 'Bearer x', 'x-request-id': 'r1' };
  return {
    path,
    method: 'GET',
    querystring: '',
    status: 200,
    body: { ok: true },
    headers,
    params: {},
    get: (name: string) => headers[name.toLowerCase()] ?? '',
    response: { get: () => '', length: undefined },
    state: {
      requestId: 'r1',
      deadline: 0,
      ...(opts.caller === false ? {} : { caller: { clientId: 'cli_1', tenant: 't', partnerId: 'p', permissions: new Set<string>(), principalId: null } }),
    },
  } as unknown as GatewayContext;
}

async function dropped(registry: Registry, reason: string): Promise<number> {
  const m = await registry.getSingleMetric('partner_request_log_dropped_total')!.get();
  return m.values.filter((v) => v.labels.reason === reason).reduce((a, v) => a + v.value, 0);
}

const recorderOf = (registry: Registry, bufferEntries: number) =>
  new RequestRecorder({
    config: { enabled: true, bufferEntries, batchEntries: 1_000, flushMs: 10_000 },
    metrics: requestLogMetrics(registry),
    logger,
    subject: 'x.requestlog.batch',
    connection: () => undefined,
  });

describe('request recorder', () => {
  it('records authenticated /v1 requests only, never the log\'s reads or the document', () => {
    const r = recorderOf(new Registry(), 100);
    r.record(ctxOf('/v1/requests'), 0.001);
    r.record(ctxOf('/v1/requests/req_0'), 0.001);
    r.record(ctxOf('/v1/openapi.json'), 0.001);
    r.record(ctxOf('/v1/health', { caller: false }), 0.001);
    r.record(ctxOf('/metrics'), 0.001);
    expect(r.buffered).toBe(0);
    r.record(ctxOf('/v1/health'), 0.001);
    r.record(ctxOf('/v1/requests-other'), 0.001);
    expect(r.buffered).toBe(2);
  });

  it('drops and counts beyond its buffer, without throwing', async () => {
    const registry = new Registry();
    const r = recorderOf(registry, 3);
    for (let i = 0; i < 10; i++) expect(() => r.record(ctxOf('/v1/health'), 0.001)).not.toThrow();
    expect(r.buffered).toBe(3);
    expect(await dropped(registry, 'buffer_full')).toBe(7);
  });

  it('drops and counts what it cannot ship without NATS', async () => {
    const registry = new Registry();
    const r = recorderOf(registry, 100);
    for (let i = 0; i < 5; i++) r.record(ctxOf('/v1/health'), 0.001);
    await r.stop();
    expect(r.buffered).toBe(0);
    expect(await dropped(registry, 'nats_unavailable')).toBe(5);
  });

  it('survives a request it cannot read', () => {
    const r = recorderOf(new Registry(), 100);
    const broken = ctxOf('/v1/health');
    Object.defineProperty(broken, 'headers', { get: () => { throw new Error('boom'); } });
    expect(() => r.record(broken, 0.001)).not.toThrow();
  });
});
