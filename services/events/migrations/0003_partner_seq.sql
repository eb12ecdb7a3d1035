-- Per-partner feed positions (API.md "Events": positions in a cursor are the partner's own; issue 36,
-- item 5). Each event gets partner_seq: 1, 2, 3, … within its partner, in the order of the global
-- position, assigned by the single feed writer from the partner's row in feed_heads. A cursor holds
-- a partner_seq, so it moves only when that partner's feed does. The global position stays: it is
-- the writer's progress through the stream, and the key that maps a cursor issued before this
-- migration (version 1, a global position) onto the partner's own sequence.
--
-- Lock order (with the webhook tables' order documented beside them): the writer takes its advisory
-- lock, then feed_heads rows in (tenant_id, partner_id) order, then inserts events; the retention
-- sweep deletes events, then updates feed_heads rows in the same (tenant_id, partner_id) order.
-- Neither updates an existing event row while holding a feed_heads row.

-- A partner's feed: seq = the highest partner_seq assigned; swept_through = the highest partner_seq
-- the retention sweep removed (a cursor below it may have missed events: 410 cursor_expired).
CREATE TABLE feed_heads (
  tenant_id text NOT NULL,
  partner_id text NOT NULL,
  seq bigint NOT NULL,
  swept_through bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, partner_id),
  CHECK (swept_through <= seq)
);

ALTER TABLE events ADD COLUMN partner_seq bigint;
UPDATE events e SET partner_seq = n.seq
  FROM (SELECT position, row_number() OVER (PARTITION BY tenant_id, partner_id ORDER BY position) AS seq FROM events) n
 WHERE e.position = n.position;
ALTER TABLE events ALTER COLUMN partner_seq SET NOT NULL;

-- Events swept before this migration had no partner_seq: numbering starts at the oldest retained
-- event, and nothing numbered has been swept yet. (Cursors of version 1 are still judged against the
-- global sweep_state, as they were issued.)
INSERT INTO feed_heads (tenant_id, partner_id, seq)
SELECT tenant_id, partner_id, max(partner_seq) FROM events GROUP BY tenant_id, partner_id;

-- A partner's feed in order (pages, the head, `since`, webhook recover); also what makes a
-- partner_seq unique. It replaces the index by global position within a partner: within one partner
-- both orders are the same.
CREATE UNIQUE INDEX events_partner_seq ON events (tenant_id, partner_id, partner_seq);
DROP INDEX events_partner_position;
