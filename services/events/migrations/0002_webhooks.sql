-- Webhooks (API.md "Webhooks"): partners' endpoints, one delivery per (endpoint, event), and each
-- delivery's attempts. Deliveries are made in the feed writer's transaction that stores the event,
-- so an event is stored if and only if its deliveries exist; the dispatcher sends them.
CREATE TABLE webhook_endpoints (
  endpoint_id text PRIMARY KEY,
  tenant_id text NOT NULL,
  partner_id text NOT NULL,
  url text NOT NULL,
  -- Event types, or {*} for all.
  event_types text[] NOT NULL,
  description text NOT NULL DEFAULT '',
  status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  -- gone | failing | partner, while disabled.
  disabled_reason text,
  secret text NOT NULL,
  -- The secret before the last rotation: it signs beside the new one until it expires.
  previous_secret text,
  previous_secret_expires_at timestamptz,
  -- The first failed attempt since the last success (null while healthy): disabling counts from it.
  failing_since timestamptz,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
);
CREATE INDEX webhook_endpoints_partner ON webhook_endpoints (tenant_id, partner_id, created_at DESC, endpoint_id DESC);
-- The feed writer's fan-out: a partner's enabled endpoints.
CREATE INDEX webhook_endpoints_enabled ON webhook_endpoints (tenant_id, partner_id) WHERE status = 'enabled';

-- What each endpoint job did, so the same job run again (a redelivery) answers the same.
CREATE TABLE webhook_job_results (
  job_id text PRIMARY KEY,
  result jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
  delivery_id text PRIMARY KEY,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints ON DELETE CASCADE,
  tenant_id text NOT NULL,
  partner_id text NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  -- The exact bytes sent (and signed) on every attempt.
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts int NOT NULL DEFAULT 0,
  -- Failed attempts since the delivery was (re)queued: the retry schedule's step.
  failures int NOT NULL DEFAULT 0,
  -- Pending: when it is due; while a dispatcher holds it, when that claim lapses.
  next_attempt_at timestamptz,
  -- The claim of the dispatcher sending it now (null when nobody is).
  lease uuid,
  last_attempt_at timestamptz,
  last_response_status int,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, created_at DESC, delivery_id DESC);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);

CREATE TABLE webhook_attempts (
  delivery_id text NOT NULL REFERENCES webhook_deliveries ON DELETE CASCADE,
  attempt int NOT NULL,
  attempted_at timestamptz NOT NULL,
  duration_ms int NOT NULL,
  response_status int,
  error text,
  -- The first 64 KiB of the answer's body, for the operator's eyes.
  response_body text,
  PRIMARY KEY (delivery_id, attempt)
);

-- Events this service records itself (webhook_endpoint.disabled), published to the events stream by
-- the dispatcher's outbox relay like every other service's.
CREATE TABLE event_outbox (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL,
  subject text NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_outbox_created_at ON event_outbox (created_at);
