-- Clearance probes (issue 48): a partner's further submissions of a risk it has already had
-- decided are `review` when their effective dates are within 120 days of an earlier one (any status,
-- withdrawn included), so that creating and withdrawing probes cannot bisect another partner's
-- effective date (services/submission/src/clearance.ts, docs/api.md "Clearance").
--
-- Why it was so decided, for operators (`clearance list`), never shown to partners:
-- 'repeated_submission' = the review above; null = decided on the matches alone.
ALTER TABLE submissions
  ADD COLUMN clearance_reason text CHECK (clearance_reason IN ('repeated_submission'));

-- The partner's own earlier submissions of a risk, by effective date: the live ones are found through
-- 0006's indexes (same leading columns); these hold only the withdrawn ones, so a create (a live row)
-- writes no extra index entry, and a withdrawal moves its row from those to these, as 0006's do.
CREATE INDEX submissions_withdrawn_risk_tax_idx ON submissions (tenant_id, product_id, risk_tax_id, partner_id, effective_date)
  WHERE status = 'withdrawn' AND risk_tax_id IS NOT NULL;
CREATE INDEX submissions_withdrawn_risk_name_idx ON submissions (tenant_id, product_id, risk_name, partner_id, effective_date)
  WHERE status = 'withdrawn' AND risk_name IS NOT NULL;
