-- Events (submission.created, attachment.created, attachment.deleted) recorded in the transaction
-- of their change, until the relay has published them to the events stream (Nats-Msg-Id = event_id).
-- Same table in every schema that records events (see services/shared/src/events.ts).
CREATE TABLE event_outbox (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL,
  subject text NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_outbox_created_at ON event_outbox (created_at);
