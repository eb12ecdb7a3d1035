-- Test clocks (issue 44, UAT only): a submission created on a test clock names it. The clock itself
-- is the policy service's (policy 0007); the create job checked it is the partner's before the insert.
-- Null: the submission lives on the wall clock.
ALTER TABLE submissions ADD COLUMN test_clock_id text CHECK (test_clock_id ~ '^clk_[0-9a-z]{24}$');
