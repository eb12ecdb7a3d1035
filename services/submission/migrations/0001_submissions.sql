-- Submission service schema: new-business submissions (intakes).
CREATE TABLE submissions (
  submission_id    uuid PRIMARY KEY,
  -- The job that created the submission: a redelivered job finds its submission instead of making another.
  job_id           text NOT NULL UNIQUE,
  tenant_id        text NOT NULL,
  partner_id       text NOT NULL,
  principal_id     text,
  external_ref     text NOT NULL,
  submission_type  text NOT NULL,
  effective_date   date NOT NULL,
  product_id       uuid NOT NULL,
  applicant        jsonb NOT NULL,
  submission_name  text NOT NULL,
  status           text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  updated_at       timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);
CREATE INDEX submissions_partner_idx ON submissions (tenant_id, partner_id, created_at DESC, submission_id);
