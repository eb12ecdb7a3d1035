-- The trace context (W3C traceparent/tracestate as a JSON object) of the request that queued a job,
-- so a job the relay loop publishes late (NATS was down) still continues that request's trace.
ALTER TABLE outbox ADD COLUMN trace_context jsonb;
