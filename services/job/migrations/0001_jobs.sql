-- Job service schema: jobs, idempotency keys and the outbox that feeds JetStream.
CREATE TABLE jobs (
  job_id        text PRIMARY KEY,
  kind          text NOT NULL,
  tenant_id     text NOT NULL,
  partner_id    text NOT NULL,
  client_id     text NOT NULL,
  principal_id  text,
  payload       jsonb NOT NULL,
  status        text NOT NULL CHECK (status IN ('accepted', 'running', 'succeeded', 'failed')),
  result        jsonb,
  error         jsonb,
  deliveries    integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  updated_at    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  settled_at    timestamptz,
  -- A succeeded job has a result and no error; a failed one an error and no result (seed §3 rule 2).
  CONSTRAINT jobs_outcome CHECK (
    (status = 'succeeded' AND result IS NOT NULL AND error IS NULL) OR
    (status = 'failed' AND error IS NOT NULL AND result IS NULL) OR
    (status IN ('accepted', 'running') AND result IS NULL AND error IS NULL)
  )
);
-- Unsettled jobs, for the stale-job sweep.
CREATE INDEX jobs_unsettled_idx ON jobs (updated_at) WHERE status IN ('accepted', 'running');

-- Idempotency keys, scoped to (partner, client, method + path). Kept 24 h from first use.
CREATE TABLE idempotency_keys (
  tenant_id    text NOT NULL,
  partner_id   text NOT NULL,
  client_id    text NOT NULL,
  scope        text NOT NULL,
  key          text NOT NULL,
  fingerprint  text NOT NULL,
  job_id       text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, partner_id, client_id, scope, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- Jobs committed but not yet acknowledged by JetStream. The relay publishes and deletes them.
CREATE TABLE outbox (
  id          bigserial PRIMARY KEY,
  job_id      text NOT NULL,
  subject     text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
