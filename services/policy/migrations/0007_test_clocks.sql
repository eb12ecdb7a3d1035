-- Test clocks (API.md "Test clocks", UAT only; issue 44): time a partner can move. The policy
-- service owns them because it owns the records time moves (quotes, referrals, policies); a
-- submission names its clock (submission 0012) and every quote and policy made for it copies the id.
--
-- A clock is `ready` or `advancing`; deleted_at marks a deleted clock (its records keep their state and
-- stop moving: nothing reads a deleted clock's records again). create_job_id / delete_job_id make the
-- create and delete jobs idempotent (a redelivered job answers with what it did).
CREATE TABLE test_clocks (
  test_clock_id  text PRIMARY KEY CHECK (test_clock_id ~ '^clk_[0-9a-z]{24}$'),
  tenant_id      text NOT NULL,
  partner_id     text NOT NULL,
  name           text,
  frozen_time    timestamptz(3) NOT NULL,
  status         text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'advancing')),
  -- The advance job under way (status advancing) and the time it moves the clock to.
  advance_job_id text,
  advance_to     timestamptz(3),
  create_job_id  text NOT NULL UNIQUE,
  delete_job_id  text UNIQUE,
  deleted_at     timestamptz(3),
  created_at     timestamptz(3) NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at     timestamptz(3) NOT NULL DEFAULT date_trunc('milliseconds', now()),
  CONSTRAINT test_clocks_advancing_check CHECK ((status = 'advancing') = (advance_job_id IS NOT NULL AND advance_to IS NOT NULL))
);
-- The partner's live clocks, newest first (GET /v1/test_clocks, the limit of 10).
CREATE INDEX test_clocks_owner_idx ON test_clocks (tenant_id, partner_id, created_at DESC, test_clock_id DESC) WHERE deleted_at IS NULL;

-- One row per advance job: the progress of its batches (a worker killed mid-advance resumes from
-- here, never applying a transition twice). applied_* is the position of the last transition
-- committed, in the advance's order (time, then record id); each batch's transitions, their events and
-- this row's update commit in one transaction.
CREATE TABLE test_clock_advances (
  job_id             text PRIMARY KEY,
  test_clock_id      text NOT NULL REFERENCES test_clocks (test_clock_id),
  from_time          timestamptz(3) NOT NULL,
  to_time            timestamptz(3) NOT NULL,
  batches            integer NOT NULL DEFAULT 0,
  quotes_expired     integer NOT NULL DEFAULT 0,
  policies_activated integer NOT NULL DEFAULT 0,
  policies_expired   integer NOT NULL DEFAULT 0,
  referrals_overdue  integer NOT NULL DEFAULT 0,
  -- The time of the last batch's last transition: the clock's records are due after it.
  applied_through    timestamptz(3),
  finished_at        timestamptz(3),
  created_at         timestamptz(3) NOT NULL DEFAULT date_trunc('milliseconds', now())
);

-- A clock's due records (an advance reads only those of its clock, by due time).
CREATE INDEX quotes_clock_open_idx ON quotes (test_clock_id, valid_until) WHERE status = 'open' AND test_clock_id IS NOT NULL;
CREATE INDEX quotes_clock_referred_idx ON quotes (test_clock_id, referral_due_by) WHERE status = 'referred' AND test_clock_id IS NOT NULL;
CREATE INDEX policies_clock_pending_idx ON policies (test_clock_id, effective_date) WHERE status = 'pending' AND test_clock_id IS NOT NULL;
CREATE INDEX policies_clock_active_idx ON policies (test_clock_id, expiration_date) WHERE status = 'active' AND test_clock_id IS NOT NULL;

-- A referral past its dueBy is reported overdue once (by an advance on its clock): when it was.
ALTER TABLE quotes ADD COLUMN referral_overdue_at timestamptz(3);
