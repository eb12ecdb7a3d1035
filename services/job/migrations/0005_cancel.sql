-- Cancellation (API.md, "Cancelling jobs and withdrawing submissions"): `canceled` is a settled
-- status beside succeeded and failed. A cancelled job carries its error (code `canceled`) and no result.
ALTER TABLE jobs DROP CONSTRAINT jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check CHECK (status IN ('accepted', 'running', 'succeeded', 'failed', 'canceled'));
ALTER TABLE jobs DROP CONSTRAINT jobs_outcome;
ALTER TABLE jobs ADD CONSTRAINT jobs_outcome CHECK (
  (status = 'succeeded' AND result IS NOT NULL AND error IS NULL) OR
  (status IN ('failed', 'canceled') AND error IS NOT NULL AND result IS NULL) OR
  (status IN ('accepted', 'running') AND result IS NULL AND error IS NULL)
);
-- status=processing: the unsettled jobs; the filter (list.ts) is written with the same predicate.
DROP INDEX jobs_owner_unsettled_created_idx;
CREATE INDEX jobs_owner_unsettled_created_idx ON jobs (tenant_id, partner_id, created_at, job_id)
  WHERE status NOT IN ('succeeded', 'failed', 'canceled');
