-- Events for every partner (product.requirements_changed; docs/events.md "Events for every
-- partner"): the writer stores one copy per partner at the stream position of the one message, so
-- a position is no longer unique on its own. It stays the writer's progress (max(position)) and the
-- retention sweep removes a position's copies together; each copy has its own event_id and its
-- partner's own partner_seq.
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD PRIMARY KEY (position, tenant_id, partner_id);
