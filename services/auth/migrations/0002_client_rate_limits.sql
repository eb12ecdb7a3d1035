-- Per-client rate limits (`admin client limits`); NULL means the gateway's default applies.
ALTER TABLE clients
  ADD COLUMN rate_limit_rps    numeric CHECK (rate_limit_rps > 0),
  ADD COLUMN rate_limit_burst  integer CHECK (rate_limit_burst > 0);
