-- Webhook signing secrets sealed at rest (issue 33; docs/webhooks.md "Signing secrets at rest"):
-- AES-256-GCM under the newest key-encryption key of AUTH_KEY_ENCRYPTION_KEY, with associated data
-- naming the endpoint and the column, so a sealed blob opens only in the place it was sealed for.
-- A migration cannot know the KEK: the events service seals every plaintext secret left in `secret`
-- and `previous_secret` at start (under an advisory lock) and empties those columns. Once every
-- events replica has started on this version they stay empty; a later migration drops them.
ALTER TABLE webhook_endpoints
  ADD COLUMN secret_sealed bytea,
  ADD COLUMN previous_secret_sealed bytea,
  ALTER COLUMN secret DROP NOT NULL;
-- Every endpoint has a secret, sealed or (until the next start seals it) not.
ALTER TABLE webhook_endpoints
  ADD CONSTRAINT webhook_endpoints_has_secret CHECK (secret_sealed IS NOT NULL OR secret IS NOT NULL);
