-- Signed receipts (docs/api.md "Signed receipts"): one per created submission and attachment,
-- written in the transaction that creates the record, chained per partner.

-- ES256 receipt keys, private halves sealed under the key-encryption key (shared/crypto/sealed-keys.ts).
-- A key signed from created_at until retired_at (NULL: it still signs); rows are never deleted.
CREATE TABLE receipt_keys (
  kid                  text PRIMARY KEY,
  alg                  text NOT NULL,
  public_jwk           jsonb NOT NULL,
  private_jwk_sealed   bytea NOT NULL,
  created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  retired_at           timestamptz
);

-- Each partner's chain head: the last seq issued and the hex SHA-256 of its compact JWS. A creating
-- transaction locks its partners' heads (one row each) before it numbers receipts, so two
-- transactions never interleave on one chain.
CREATE TABLE receipt_heads (
  tenant_id     text NOT NULL,
  partner_id    text NOT NULL,
  seq           bigint NOT NULL,
  jws_sha256    text,
  PRIMARY KEY (tenant_id, partner_id)
);

CREATE TABLE receipts (
  tenant_id      text NOT NULL,
  partner_id     text NOT NULL,
  seq            bigint NOT NULL CHECK (seq >= 1),
  kind           text NOT NULL CHECK (kind IN ('submission.received', 'attachment.received')),
  submission_id  uuid NOT NULL,
  attachment_id  uuid,
  -- The job that created the record: a redelivered job answers this receipt, never a second one.
  job_id         text NOT NULL UNIQUE,
  kid            text NOT NULL REFERENCES receipt_keys (kid),
  jws            text NOT NULL,
  issued_at      timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, partner_id, seq)
);
CREATE INDEX receipts_submission_idx ON receipts (tenant_id, partner_id, submission_id, seq);
