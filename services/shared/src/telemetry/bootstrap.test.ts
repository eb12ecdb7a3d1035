import { describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { shutdownTelemetry, startTelemetry, tracesEnabled } from './bootstrap.js';

describe('tracesEnabled', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
  ])('%j → %s', (env, enabled) => {
    expect(tracesEnabled(env)).toBe(enabled);
  });
});

describe('startTelemetry', () => {
  it('does nothing when traces are not configured: no SDK, no tracer provider', async () => {
    expect(await startTelemetry('test', {})).toBe(false);
    // The API's global provider is still the no-op proxy: spans are not recorded.
    const span = trace.getTracer('x').startSpan('s');
    expect(span.isRecording()).toBe(false);
    span.end();
    await expect(shutdownTelemetry()).resolves.toBeUndefined();
  });
});
