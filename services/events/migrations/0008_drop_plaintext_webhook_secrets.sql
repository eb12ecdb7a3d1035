-- The plaintext webhook secret columns are dropped (issue 48, 9; docs/webhooks.md "Signing secrets at
-- rest", docs/webhooks-design.md "From plaintext"). Safe in a rolling update:
--  * No statement of this version names `secret` or `previous_secret`; its sealing at start finds what
--    is left in them through the row as JSON (works with or without the columns).
--  * Before this file runs, the migration step of this version (webhooks/secrets.ts, sealWith, on the
--    migrating connection, under the migration lock: the events service's start and `main.js
--    migrate` alike) seals whatever plaintext is left. Should any still be there, this refuses: the
--    drop never destroys a secret that is not sealed.
--  * The previous version, still running during the rollout, names both columns in its statements
--    (its dispatcher's claim, its endpoint reads and rotation). Dropped outright, those statements
--    would fail until its pods are gone. So the columns that held plaintext are dropped, and two
--    columns of the same names that can hold nothing but NULL stand in for them: the previous
--    version reads NULL (it then opens the sealed columns) and writes only NULL there. The next
--    release drops these stand-ins (nothing of this version names them; test: webhook-secrets).
DO $$
DECLARE
  left_over int;
BEGIN
  SELECT count(*) INTO left_over FROM webhook_endpoints WHERE secret IS NOT NULL OR previous_secret IS NOT NULL;
  IF left_over > 0 THEN
    RAISE EXCEPTION 'refusing to drop the plaintext webhook secret columns: % endpoint(s) still have a plaintext secret', left_over
      USING HINT = 'start the events service of this version with AUTH_KEY_ENCRYPTION_KEY set (it seals them before this migration), then migrate again';
  END IF;
END $$;

ALTER TABLE webhook_endpoints
  DROP CONSTRAINT webhook_endpoints_has_secret,
  DROP COLUMN secret,
  DROP COLUMN previous_secret,
  ALTER COLUMN secret_sealed SET NOT NULL;

-- Stand-ins for the previous version's statements during the rollout: never a value.
ALTER TABLE webhook_endpoints
  ADD COLUMN secret text CONSTRAINT webhook_endpoints_no_plaintext_secret CHECK (secret IS NULL),
  ADD COLUMN previous_secret text CONSTRAINT webhook_endpoints_no_plaintext_previous_secret CHECK (previous_secret IS NULL);
COMMENT ON COLUMN webhook_endpoints.secret IS 'always NULL: stands in for the dropped plaintext column while the previous version runs; dropped by the next release';
COMMENT ON COLUMN webhook_endpoints.previous_secret IS 'always NULL: stands in for the dropped plaintext column while the previous version runs; dropped by the next release';
