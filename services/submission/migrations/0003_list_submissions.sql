-- GET /v1/submissions: a partner's submissions newest first, keyset-paginated on (created_at,
-- submission_id), both immutable (see job.jobs_owner_created_idx for why that keeps walks exact).
-- Replaces submissions_partner_idx, whose mixed directions (created_at DESC, submission_id ASC) can
-- not serve that order.
CREATE INDEX submissions_owner_created_idx ON submissions (tenant_id, partner_id, created_at, submission_id);
DROP INDEX submissions_partner_idx;
-- externalRef: the reconciliation lookup ("lost a job handle? find it by externalRef").
CREATE INDEX submissions_owner_ref_idx ON submissions (tenant_id, partner_id, external_ref, created_at, submission_id);
-- principalId: a principal's submissions, in list order.
CREATE INDEX submissions_owner_principal_idx ON submissions (tenant_id, partner_id, principal_id, created_at, submission_id);
-- updatedSince: the recently changed submissions when they are few (the usual sync case).
CREATE INDEX submissions_owner_updated_idx ON submissions (tenant_id, partner_id, updated_at);

-- HMAC key for list cursors (as policy.cursor_keys).
CREATE TABLE cursor_keys (
  id         smallint PRIMARY KEY CHECK (id = 1),
  secret     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
