-- Bind (issue 43): the submission's side. A bind and a withdraw meet here first, under the
-- submission's risk locks and its row: a bind takes the reservation (bind_job_id) only on a
-- submitted, unreserved submission, and a withdraw succeeds only on an unreserved one, each in one
-- conditional UPDATE, so of the two exactly one wins (test/bind-races.test.ts). The reserved
-- submission becomes `bound` when its policy is issued (CompleteBind, the same job).
ALTER TABLE submissions
  ADD COLUMN bind_job_id   text UNIQUE,
  ADD COLUMN bind_quote_id uuid,
  ADD CONSTRAINT submissions_bound_has_bind CHECK (status <> 'bound' OR bind_job_id IS NOT NULL),
  ADD CONSTRAINT submissions_bind_quote CHECK ((bind_job_id IS NULL) = (bind_quote_id IS NULL)),
  ADD CONSTRAINT submissions_status_check CHECK (status IN ('submitted', 'withdrawn', 'bound'));

-- Receipts extend to the deal: bind.received and policy.issued. A bind job issues both, so a
-- receipt is unique per (job, kind), no longer per job.
ALTER TABLE receipts DROP CONSTRAINT receipts_kind_check;
ALTER TABLE receipts ADD CONSTRAINT receipts_kind_check
  CHECK (kind IN ('submission.received', 'attachment.received', 'bind.received', 'policy.issued'));
ALTER TABLE receipts DROP CONSTRAINT receipts_job_id_key;
ALTER TABLE receipts ADD CONSTRAINT receipts_job_kind_key UNIQUE (job_id, kind);
