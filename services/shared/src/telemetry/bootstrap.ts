// Telemetry bootstrap of every process: starts the OpenTelemetry Node SDK when traces are to be
// exported (OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_TRACES_EXPORTER
// other than none), and does nothing at all otherwise: no SDK loaded, no exporter, our spans are the
// API's no-ops. Exporter, protocol, headers, sampler and propagators come from the standard OTEL_*
// variables (the SDK reads them); service.name is OTEL_SERVICE_NAME or the service's own name.
//
// Each main.ts calls startTelemetry() before it imports any application module (it imports them
// dynamically afterwards): the ESM loader hook registered here must see `pg` being imported for the
// pg instrumentation to apply. Metrics stay with prom-client on the ops port and logs with pino on
// stdout, so the SDK's own metric and log pipelines are switched off.
import { register } from 'node:module';
import { EnvReader } from '../config/env.js';
import { querySpanName } from './span-name.js';

type Env = Record<string, string | undefined>;

/** Modules the loader hook intercepts (the instrumented ones only; everything else loads untouched). */
const INSTRUMENTED_MODULES = ['pg', 'pg-pool', 'http', 'https'];

let running: { shutdown(): Promise<void> } | undefined;

/** The standard OTEL_* variables this code reads itself; the SDK reads the rest (docs/operations.md "Traces"). */
export function readTelemetry(env: EnvReader) {
  return {
    sdkDisabled: env.optionalStr('OTEL_SDK_DISABLED', { doc: 'true: tracing off, whatever else is set', range: 'true, false' }),
    tracesExporter: env.optionalStr('OTEL_TRACES_EXPORTER', { doc: 'turns tracing on (any value but none) or off; unset: on when an OTLP endpoint is set', range: 'otlp, console, none' }),
    otlpEndpoint: env.optionalStr('OTEL_EXPORTER_OTLP_ENDPOINT', { doc: 'turns tracing on: OTLP (over HTTP by default) to this collector' }),
    otlpTracesEndpoint: env.optionalStr('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', { doc: 'turns tracing on: OTLP to this URL, for traces alone' }),
    serviceName: env.optionalStr('OTEL_SERVICE_NAME', { doc: "service.name of the traces; unset: the process's own name" }),
  };
}

/** Whether traces are exported: an OTLP endpoint or a trace exporter is configured, and the SDK is not disabled. */
export function tracesEnabled(env?: Env): boolean {
  const otel = readTelemetry(new EnvReader(env));
  if ((otel.sdkDisabled ?? '').toLowerCase() === 'true') return false;
  const exporters = (otel.tracesExporter ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (exporters.length > 0) return exporters[0] !== 'none';
  return Boolean(otel.otlpEndpoint || otel.otlpTracesEndpoint);
}

/**
 * Starts tracing for this process if configured; returns whether it did. Call once, first thing in
 * main.ts, before importing the application.
 */
export async function startTelemetry(service: string, env?: Env): Promise<boolean> {
  if (running) return true;
  if (!tracesEnabled(env)) return false;
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: INSTRUMENTED_MODULES } });
  const [{ NodeSDK }, { HttpInstrumentation }, { PgInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
  ]);
  const sdk = new NodeSDK({
    serviceName: readTelemetry(new EnvReader(env)).serviceName ?? service,
    instrumentations: [
      // Incoming requests get our own server spans (gateway, token server), which honour
      // TRUST_TRACEPARENT; the ops listener (/livez, /readyz, /dependencies, /metrics) is never traced.
      new HttpInstrumentation({ disableIncomingRequestInstrumentation: true, requireParentforOutgoingSpans: true }),
      // Only queries made on behalf of a traced request or job (not the relay's and sweeps' polling);
      // statements without their parameter values.
      // Spans are named by what the statement does (`INSERT jobs`), not by the prepared statement's
      // hash name (span-name.ts).
      new PgInstrumentation({
        requireParentSpan: true,
        enhancedDatabaseReporting: false,
        requestHook: (span, { query }) => {
          const named = querySpanName(query.text);
          span.updateName(named.name);
          span.setAttribute('db.operation.name', named.operation);
          if (named.collection) span.setAttribute('db.collection.name', named.collection);
        },
      }),
    ],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  running = sdk;
  return true;
}

/** Flushes and stops tracing (the last step of a shutdown); a no-op when it never started. */
export async function shutdownTelemetry(timeoutMs = 5_000): Promise<void> {
  const sdk = running;
  if (!sdk) return;
  running = undefined;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    sdk.shutdown().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}
