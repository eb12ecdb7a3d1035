-- Clearance (docs/api.md "Clearance"): the risk key of each submission, its clearance decision, and
-- withdrawal. The decision is made in the transaction that creates the submission, under
-- transaction-scoped advisory locks on the risk key (services/submission/src/clearance.ts).
ALTER TABLE submissions
  -- normalizeLegalName(applicant.legalName) and the FEIN: what a risk is matched on. Null on rows
  -- made before clearance existed (they hold no risk).
  ADD COLUMN risk_name text,
  ADD COLUMN risk_tax_id text,
  ADD COLUMN risk_country text,
  ADD COLUMN risk_postal_code text,
  ADD COLUMN clearance_status text NOT NULL DEFAULT 'cleared'
    CHECK (clearance_status IN ('cleared', 'duplicate', 'blocked', 'review')),
  ADD COLUMN clearance_basis text CHECK (clearance_basis IN ('tax_id', 'name_address', 'name_only')),
  -- Only for `duplicate`: the same partner's earlier submission.
  ADD COLUMN clearance_duplicate_of uuid,
  -- Null: decided at creation (created_at).
  ADD COLUMN clearance_decided_at timestamptz,
  -- Operators' decisions (admin CLI `clearance decide`), newest last: [{status, by, at, note?, force?}].
  -- Never shown to partners.
  ADD COLUMN clearance_log jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- {reason, note?, withdrawnAt} once withdrawn (status 'withdrawn'); the job that withdrew it.
  ADD COLUMN withdrawal jsonb,
  ADD COLUMN withdraw_job_id text UNIQUE,
  ADD CONSTRAINT submissions_cleared_has_no_basis CHECK ((clearance_status = 'cleared') = (clearance_basis IS NULL)),
  ADD CONSTRAINT submissions_withdrawn_has_withdrawal CHECK ((status = 'withdrawn') = (withdrawal IS NOT NULL));

-- The reads after the locks: live submissions of a tenant and product with one FEIN or one name, by
-- partner and age (the partner's own earliest match, another partner's match: one index probe each,
-- however many submissions a risk has).
CREATE INDEX submissions_risk_tax_idx ON submissions (tenant_id, product_id, risk_tax_id, partner_id, created_at)
  WHERE status <> 'withdrawn' AND risk_tax_id IS NOT NULL;
CREATE INDEX submissions_risk_name_idx ON submissions (tenant_id, product_id, risk_name, partner_id, created_at)
  WHERE status <> 'withdrawn' AND risk_name IS NOT NULL;
-- GET /v1/submissions?clearance=…, in list order.
CREATE INDEX submissions_owner_clearance_idx ON submissions (tenant_id, partner_id, clearance_status, created_at, submission_id);
-- Operators' queue (clearance list) and the oldest waiting review (the gauge).
CREATE INDEX submissions_clearance_queue_idx ON submissions (clearance_status, created_at)
  WHERE clearance_status IN ('blocked', 'review') AND status <> 'withdrawn';
