-- Events service schema: the event feed (API.md "Events"). One writer stores events in the order of
-- the events stream; position = the JetStream stream sequence, so feed order is stream order and a
-- cursor (a position) can never be passed by an event stored later.
CREATE TABLE events (
  position bigint PRIMARY KEY,
  event_id text NOT NULL UNIQUE,
  tenant_id text NOT NULL,
  partner_id text NOT NULL,
  type text NOT NULL,
  "timestamp" timestamptz NOT NULL,
  data jsonb NOT NULL,
  stored_at timestamptz NOT NULL DEFAULT now()
);
-- A partner's feed, in order.
CREATE INDEX events_partner_position ON events (tenant_id, partner_id, position);
-- The retention sweep and `since`.
CREATE INDEX events_stored_at ON events (stored_at);

-- The highest position the retention sweep has removed: a cursor below it may have missed events (410).
CREATE TABLE sweep_state (
  id int PRIMARY KEY CHECK (id = 1),
  swept_through bigint NOT NULL
);
INSERT INTO sweep_state (id, swept_through) VALUES (1, 0);

-- The generated cursor-signing secret (when EVENTS_CURSOR_SECRET is not configured).
CREATE TABLE cursor_keys (
  id int PRIMARY KEY CHECK (id = 1),
  secret text NOT NULL
);
