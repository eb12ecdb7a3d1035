-- The partner console (API.md "Partner console"): a single-use sign-in link minted by a client
-- (POST /v1/console/sessions), exchanged once for a server-side session that every gateway replica
-- resolves by its id. Neither the link's token nor the session's id is stored: only their SHA-256,
-- so a read of this table lets nobody sign in. A session acts as its client, with the client's
-- current permissions, and ends when it expires, when the client is disabled, or when the client's
-- tokens are revoked (its token_version is then below the client's).
CREATE TABLE console_links (
  token_hash     bytea PRIMARY KEY,
  client_id      text NOT NULL REFERENCES clients (client_id),
  read_only      boolean NOT NULL,
  token_version  bigint NOT NULL,
  created_at     timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL,
  -- Set once, by the exchange that wins: a second opening of the link finds it used.
  used_at        timestamptz
);
CREATE INDEX console_links_expiry_idx ON console_links (expires_at);

CREATE TABLE console_sessions (
  session_hash   bytea PRIMARY KEY,
  client_id      text NOT NULL REFERENCES clients (client_id),
  read_only      boolean NOT NULL,
  token_version  bigint NOT NULL,
  -- Sent back by the console's code on every mutation (X-CSRF-Token); not a credential by itself.
  csrf_token     text NOT NULL,
  created_at     timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL,
  ended_at       timestamptz
);
CREATE INDEX console_sessions_client_idx ON console_sessions (client_id);
CREATE INDEX console_sessions_expiry_idx ON console_sessions (expires_at);
