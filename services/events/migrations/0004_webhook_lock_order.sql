-- Webhooks: the lock order, and no pending delivery of a disabled endpoint (issue 36).
--
-- Lock order for endpoint and delivery rows, everywhere (services/events/src/webhooks/repo.ts,
-- dispatcher/store.ts): a transaction that changes existing rows of webhook_deliveries first locks
-- their endpoint's row in webhook_endpoints — FOR NO KEY UPDATE (an UPDATE of it takes the same), or
-- FOR UPDATE to delete it — and only then the deliveries; at most one endpoint per transaction.
--   * endpoint jobs (update, delete, rotate, ping): the endpoint, then its deliveries (failPending,
--     the delete's cascade);
--   * recover: enables the endpoint in its own transaction, then queues in batches of 500 events,
--     each batch its own transaction that locks the endpoint first (held for one batch, not the
--     whole recover);
--   * the dispatcher's settleFailure, and settleSuccess of a failing endpoint: the endpoint, then the
--     delivery, then the endpoint's health; the claim locks deliveries alone but with SKIP LOCKED,
--     so it never waits and can close no cycle;
--   * the feed writer inserts new deliveries (invisible to everyone else until it commits); their
--     foreign-key check takes FOR KEY SHARE on the endpoint, which FOR NO KEY UPDATE does not block.
-- Every statement is bounded by the server: statement_timeout and lock_timeout (DB_STATEMENT_TIMEOUT_MS,
-- DB_LOCK_TIMEOUT_MS; services/shared/src/pg.ts).
--
-- Deliveries of a disabled endpoint are never pending: disabling fails them (with the reason), ping
-- refuses a disabled endpoint, and the dispatcher selects only deliveries of enabled endpoints. Those
-- left pending before this migration (pings of disabled endpoints) fail now.
UPDATE webhook_deliveries d
   SET status = 'failed', next_attempt_at = NULL, lease = NULL,
       last_error = coalesce(d.last_error || '; ', '') || 'the endpoint was disabled'
  FROM webhook_endpoints w
 WHERE w.endpoint_id = d.endpoint_id AND w.status = 'disabled' AND d.status = 'pending';
