import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { codeLabel, gatewayMetrics } from './metrics.js';

describe('gateway metrics', () => {
  it('bound the code label to the documented codes plus other', async () => {
    expect(codeLabel('unavailable')).toBe('unavailable');
    expect(codeLabel('sandbox_made_up_code')).toBe('other');
    const registry = new Registry();
    const metrics = gatewayMetrics(registry, { maxWaiters: 7 });
    for (const code of ['x1', 'x2', 'x3']) {
      metrics.observe({ state: { route: '/v1/jobs/:id', errorCode: code }, method: 'GET', status: 422 } as never, 0.01);
    }
    const errors = (await registry.getSingleMetric('partner_gateway_http_errors_total')!.get()).values;
    expect(errors.find((v) => v.labels.code === 'other')?.value).toBe(3);
    expect(errors.some((v) => String(v.labels.code).startsWith('x'))).toBe(false);
    expect((await registry.getSingleMetric('partner_gateway_max_waiters')!.get()).values[0]!.value).toBe(7);
  });
});
