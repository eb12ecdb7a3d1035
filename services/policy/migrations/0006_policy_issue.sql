-- Policies issued by binds (issue 43), beside the imported ones, and their documents.
--
-- An issued policy names its quote (quote_id), the quote's option and the submission it came from;
-- bind_job_id is the quote.bind job that issued it: a redelivered or retried job finds its policy
-- here and never issues a second one. Exactly one policy per submission comes from a bind: the partial
-- unique index on submission_id is the constraint that makes racing binds of one submission's quotes
-- end with one policy (test/bind-races.test.ts removes it to show the race it guards).
ALTER TABLE policies
  ADD COLUMN quote_id         uuid,
  ADD COLUMN option_limit     text,
  ADD COLUMN option_retention text,
  ADD COLUMN test_clock_id    text,
  ADD COLUMN bind_job_id      text,
  ADD CONSTRAINT policies_issued_has_option CHECK ((quote_id IS NULL) = (option_limit IS NULL) AND (quote_id IS NULL) = (option_retention IS NULL)),
  ADD CONSTRAINT policies_issued_has_bind_job CHECK ((quote_id IS NULL) = (bind_job_id IS NULL)),
  ADD CONSTRAINT policies_issued_has_submission CHECK (quote_id IS NULL OR submission_id IS NOT NULL);

CREATE UNIQUE INDEX policies_bind_job_key ON policies (bind_job_id) WHERE bind_job_id IS NOT NULL;
CREATE UNIQUE INDEX policies_quote_key ON policies (quote_id) WHERE quote_id IS NOT NULL;
CREATE UNIQUE INDEX policies_issued_submission_key ON policies (submission_id) WHERE quote_id IS NOT NULL;
-- policyNumber is unique within the tenant for issued policies (imported ones keep their partner's
-- numbering, unique per partner as 0002 says); issued numbers come from one sequence.
CREATE UNIQUE INDEX policies_issued_number_key ON policies (tenant_id, policy_number) WHERE quote_id IS NOT NULL;
CREATE SEQUENCE policy_number_seq;

-- The wall-clock sweeper (src/issue/transitions.ts) reads only what is due: pending policies by
-- effective date, active ones by expiration date; policies on a test clock move with their clock.
CREATE INDEX policies_due_pending_idx ON policies (effective_date)
  WHERE status = 'pending' AND quote_id IS NOT NULL AND test_clock_id IS NULL;
CREATE INDEX policies_due_active_idx ON policies (expiration_date)
  WHERE status = 'active' AND quote_id IS NOT NULL AND test_clock_id IS NULL;

-- Documents of a policy (the declarations PDF generated at issue), bytes kept here with their sha256
-- (the ETag of the content). One declarations document per policy.
CREATE TABLE policy_documents (
  document_id   uuid PRIMARY KEY,
  policy_id     uuid NOT NULL REFERENCES policies (policy_id),
  tenant_id     text NOT NULL,
  partner_id    text NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('declarations')),
  file_name     text NOT NULL,
  content_type  text NOT NULL,
  size_bytes    integer NOT NULL CHECK (size_bytes >= 0),
  sha256        text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  bytes         bytea NOT NULL,
  created_at    timestamptz(3) NOT NULL DEFAULT date_trunc('milliseconds', now()),
  CONSTRAINT policy_documents_kind_key UNIQUE (policy_id, kind),
  CONSTRAINT policy_documents_size_check CHECK (octet_length(bytes) = size_bytes)
);
