-- Quotes (API.md "Quotes, underwriting referrals, bind and issue"): one row per option of a
-- `quote.create` job, owned by one partner of one tenant (the pair is the isolation key of every
-- query). The policy service is the only writer; the bind (issue 43) moves a quote to `bound` and its
-- siblings to `not_taken` in its own transaction on this table.
--
-- Idempotency: (job_id, option_index) is unique, so a redelivered job inserts nothing new and reads
-- back the quotes it created. A UAT decision made by a job records its job id (decision_job_id), so a
-- redelivered decide answers with the quote it decided instead of a conflict.
--
-- Amounts are unconstrained NUMERIC (the scale given is kept: "1234.50" stays "1234.50"); the
-- option's limit and retention are the decimal strings the partner sent, which name keys of the
-- rating plan's tables, kept as text so they read back exactly as sent. Timestamps have millisecond
-- precision, exactly what the API prints.
CREATE TABLE quotes (
  quote_id             uuid PRIMARY KEY,
  tenant_id            text NOT NULL,
  partner_id           text NOT NULL,
  submission_id        uuid NOT NULL,
  product_id           uuid NOT NULL,
  -- The quote.create job that created it and the option's place in its body (0-based).
  job_id               text NOT NULL,
  option_index         smallint NOT NULL CHECK (option_index >= 0 AND option_index < 5),
  option_limit         text NOT NULL,
  option_retention     text NOT NULL,
  status               text NOT NULL
                         CHECK (status IN ('open', 'referred', 'declined', 'bound', 'expired', 'superseded', 'not_taken')),
  -- Null when declined (by a rule or by an underwriter).
  premium_amount       numeric CHECK (premium_amount >= 0),
  premium_currency     text CHECK (premium_currency ~ '^[A-Z]{3}$'),
  rating_version       bigint NOT NULL,
  -- Set while open (now + the plan's validDays, from the quote's clock); kept afterwards as history.
  valid_until          timestamptz(3),
  -- The referral, when a refer rule matched: every reason [{code, field}], its due time, and the
  -- underwriter's decision once made (who and when: operator or UAT partner principal).
  referral_reasons     jsonb,
  referral_due_by      timestamptz(3),
  decision_outcome     text CHECK (decision_outcome IN ('approved', 'declined')),
  decision_note        text,
  decision_decided_at  timestamptz(3),
  decision_decided_by  text,
  decision_job_id      text UNIQUE,
  -- Every reason a decline rule matched [{code, field}] (an underwriter's decline: [{code, field: null}]).
  decline_reasons      jsonb,
  -- The offer of an open quote: a compact JWS (typ offer+jws) and the lowercase hex SHA-256 of its
  -- ASCII bytes (what a bind's offerSha256 must equal). Null unless the quote was ever open.
  offer                text,
  offer_sha256         text CHECK (offer_sha256 ~ '^[0-9a-f]{64}$'),
  -- The submission's test clock (issue 44), null on the wall clock.
  test_clock_id        text,
  created_at           timestamptz(3) NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at           timestamptz(3) NOT NULL DEFAULT date_trunc('milliseconds', now()),
  CONSTRAINT quotes_job_option_key UNIQUE (job_id, option_index),
  CONSTRAINT quotes_premium_check CHECK ((premium_amount IS NULL) = (premium_currency IS NULL)),
  CONSTRAINT quotes_referral_check CHECK ((referral_reasons IS NULL) = (referral_due_by IS NULL)),
  CONSTRAINT quotes_decision_check CHECK ((decision_outcome IS NULL) = (decision_decided_at IS NULL)),
  CONSTRAINT quotes_offer_check CHECK ((offer IS NULL) = (offer_sha256 IS NULL)),
  CONSTRAINT quotes_open_check CHECK (status <> 'open' OR (offer IS NOT NULL AND valid_until IS NOT NULL AND premium_amount IS NOT NULL))
);

-- GET /v1/submissions/{id}/quotes (newest first, keyset on (created_at, quote_id)) and the
-- supersede of a submission's open and referred quotes.
CREATE INDEX quotes_submission_created_idx ON quotes (tenant_id, partner_id, submission_id, created_at, quote_id);
CREATE INDEX quotes_submission_status_idx ON quotes (tenant_id, partner_id, submission_id, status, created_at, quote_id);
-- Referrals waiting (admin `quote referrals`, the metrics, the overdue alert): few rows, by due time.
CREATE INDEX quotes_referred_due_idx ON quotes (referral_due_by) WHERE status = 'referred';
-- Decisions by outcome (the referral metrics count them at each scrape).
CREATE INDEX quotes_decided_idx ON quotes (decision_outcome) WHERE decision_outcome IS NOT NULL;
-- Open quotes by validUntil (expiry, issue 44's transitions).
CREATE INDEX quotes_open_valid_until_idx ON quotes (valid_until) WHERE status = 'open';
