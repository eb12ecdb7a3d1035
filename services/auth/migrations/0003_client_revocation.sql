-- The revocation/version record of a client, read by the gateways (GetClientState) and pushed to them
-- over NATS when an operator changes it: `version` grows with every change of the client's
-- provisioning (permissions, limits, disabling, revocation); tokens carry `token_version` as their
-- `tv` claim, and `client revoke-tokens` raises it, so every token issued before is refused.
ALTER TABLE clients
  ADD COLUMN version        bigint NOT NULL DEFAULT 1,
  ADD COLUMN token_version  bigint NOT NULL DEFAULT 0;
