-- The request log (API.md "Request log"; issue 45): every authenticated /v1 request of a partner, as
-- the gateways recorded and redacted it, stored by the events service's request-log writer from the
-- request-log stream. Partitioned by day on created_at (declarative range partitioning): the writer
-- and the partition job (src/request-log/partitions.ts) create each day's partition ahead of time
-- (request_log_pYYYYMMDD, [day, day + 1) in UTC), and retention drops whole partitions, never deletes rows.
CREATE TABLE request_log (
  -- req_<32 hex> without its prefix: a UUIDv7 whose time is created_at (so a read by id finds its partition).
  id uuid NOT NULL,
  tenant_id text NOT NULL,
  partner_id text NOT NULL,
  created_at timestamptz NOT NULL,
  request_id text NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  query text,
  status smallint NOT NULL,
  duration_ms real NOT NULL,
  client_id text NOT NULL,
  principal_id text,
  idempotency_key text,
  idempotent_replayed boolean NOT NULL,
  job_id text,
  error_code text,
  request_headers jsonb NOT NULL,
  request_body jsonb,
  request_body_truncated boolean NOT NULL,
  request_body_size_bytes integer,
  response_body jsonb,
  response_body_truncated boolean NOT NULL,
  response_body_size_bytes integer,
  -- A partner's log newest first (keyset: created_at, id), and the read by id; a batch stored twice
  -- (a redelivery) inserts nothing the second time.
  PRIMARY KEY (tenant_id, partner_id, created_at, id)
) PARTITION BY RANGE (created_at);

-- The filters partners look up by: an Idempotency-Key (a request and its replays), an X-Request-Id,
-- a job. Each newest first within the partner.
CREATE INDEX request_log_idempotency_key ON request_log (tenant_id, partner_id, idempotency_key, created_at) WHERE idempotency_key IS NOT NULL;
CREATE INDEX request_log_request_id ON request_log (tenant_id, partner_id, request_id, created_at);
CREATE INDEX request_log_job_id ON request_log (tenant_id, partner_id, job_id, created_at) WHERE job_id IS NOT NULL;
