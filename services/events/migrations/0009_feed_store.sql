-- The feed writer's batch as one call (issue 47, item 3; services/events/src/writer.ts): the writer ran
-- three round trips per batch (BEGIN with its lock, the planner settings and the stored position; the
-- store; COMMIT), and that transaction was the largest stage between a settle and a feed reader
-- (docs/performance.md). `SELECT * FROM feed_store(…)`, sent outside a transaction, is the whole
-- transaction in one round trip: PostgreSQL commits when the call returns.
--
-- In order:
--  * the writer's advisory lock (key 1702260340, "evnt": WRITER_LOCK in writer.ts), transaction-scoped,
--    so replicas (and a writer of the previous version, which takes the same lock in its BEGIN) never
--    store at once;
--  * an asynchronous commit for this transaction: set in the body, where it lasts to the commit. (A
--    SET clause of the function would be undone when the function returns, before the commit.) The
--    stream is the record and the stored position commits with the events: a crash loses a suffix of
--    batches, read again and stored identically (docs/reliability.md);
--  * the stored position (the highest stored, or swept), read by a statement of its own: a function
--    that is not STABLE takes a new snapshot per statement, so this one sees what the lock's previous
--    holder committed;
--  * below what this writer's own commits stored (`committed_through`): a commit was lost (PostgreSQL
--    crashed before the asynchronous commit reached its WAL). It raises SQLSTATE EVLC1 with the
--    stored position as its DETAIL, and the writer reads the stream again from there (LostCommitError);
--  * the batch's events past the stored position and not stored yet (each once): each partner's feed_heads row
--    advanced by its count (one upsert, rows locked in (tenant_id, partner_id) order, the order the
--    retention sweep uses), its seqs handed out in stream order (the input's order), the events, and the
--    webhook deliveries of what was stored, one per matching enabled endpoint. An endpoint's own
--    creation job is not delivered to it: it settles before the partner can hold a secret the service
--    made (docs/webhooks.md, "Register an endpoint"). Every statement reads a few rows through indexes:
--    the planner is held to index walks (the SET clauses, PLANNER_INDEX_WALKS in shared/db/pg.ts);
--    planned freely, on a table grown since its last ANALYZE, the stored-id check read the whole
--    events table on every batch. Its tables are the schema's whatever the caller's search_path (SET
--    search_path FROM CURRENT: the migration's, the service's schema).
-- It returns the stored events (as the wake-ups carry them), each with the number of deliveries queued.
--
-- feed_stored_through() is the highest stream position the feed has consumed: the top stored
-- position, or what the retention sweep removed when it emptied the feed (so a restart never stores
-- swept events again). The writer starts its consumer after it (writer.ts storedThrough), the
-- partner_events_writer_pending gauge counts from it, and feed_store checks against it.
CREATE FUNCTION feed_stored_through() RETURNS bigint
LANGUAGE sql STABLE
SET search_path FROM CURRENT
AS $fn$
  SELECT GREATEST((SELECT coalesce(max(position), 0) FROM events), (SELECT swept_through FROM sweep_state WHERE id = 1))
$fn$;

CREATE FUNCTION feed_store(
  committed_through bigint,
  positions bigint[], event_ids text[], tenant_ids text[], partner_ids text[],
  types text[], timestamps timestamptz[], datas jsonb[], bodies text[]
) RETURNS TABLE (partner_seq bigint, tenant_id text, partner_id text, event_id text, "position" bigint,
                 type text, "timestamp" timestamptz, data_json text, queued bigint)
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET search_path FROM CURRENT
AS $fn$
#variable_conflict use_column
DECLARE
  through bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(1702260340);
  PERFORM set_config('synchronous_commit', 'off', true);
  through := feed_stored_through();
  IF through < committed_through THEN
    RAISE EXCEPTION 'the stored feed ends at position %, before % that this writer committed', through, committed_through
      USING ERRCODE = 'EVLC1', DETAIL = through::text;
  END IF;
  RETURN QUERY
  WITH input AS (
     SELECT * FROM unnest(positions, event_ids, tenant_ids, partner_ids, types, timestamps, datas, bodies)
       WITH ORDINALITY AS t(pos, id, tenant, partner, kind, ts, data, body, ord)
   ), fresh AS (
     -- An event repeated within the batch once (its first copy past the stored position), so no
     -- partner_seq is spent on an event that is not inserted.
     SELECT DISTINCT ON (i.id) * FROM input i
      WHERE i.pos > through AND NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = i.id)
      ORDER BY i.id, i.ord
   ), heads AS (
     INSERT INTO feed_heads AS h (tenant_id, partner_id, seq)
     SELECT f.tenant, f.partner, count(*) FROM fresh f GROUP BY 1, 2 ORDER BY 1, 2
     ON CONFLICT (tenant_id, partner_id) DO UPDATE SET seq = h.seq + EXCLUDED.seq
     RETURNING h.tenant_id AS tenant, h.partner_id AS partner, h.seq AS head
   ), numbered AS (
     SELECT f.*, h.head - count(*) OVER w + row_number() OVER (w ORDER BY f.ord) AS seq
       FROM fresh f JOIN heads h ON h.tenant = f.tenant AND h.partner = f.partner
     WINDOW w AS (PARTITION BY f.tenant, f.partner)
   ), ins AS (
     INSERT INTO events AS e (position, partner_seq, event_id, tenant_id, partner_id, type, "timestamp", data)
     SELECT n.pos, n.seq, n.id, n.tenant, n.partner, n.kind, n.ts, n.data FROM numbered n ORDER BY n.ord
     ON CONFLICT (event_id) DO NOTHING
     RETURNING e.partner_seq, e.tenant_id, e.partner_id, e.event_id, e.position, e.type, e."timestamp", e.data::text AS data_json
   ), queued AS (
     INSERT INTO webhook_deliveries (delivery_id, endpoint_id, tenant_id, partner_id, event_id, event_type, body, next_attempt_at)
     SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), w.endpoint_id, s.tenant_id, s.partner_id, s.event_id, s.type, n.body, now()
       FROM ins s
       JOIN numbered n ON n.id = s.event_id
       JOIN webhook_endpoints w
         ON w.tenant_id = s.tenant_id AND w.partner_id = s.partner_id AND w.status = 'enabled'
        AND (s.type = ANY(w.event_types) OR '*' = ANY(w.event_types))
        AND NOT (s.type = 'job.succeeded' AND n.body::jsonb #>> '{data,kind}' = 'webhook_endpoint.create'
                 AND n.body::jsonb #>> '{data,result,endpointId}' = w.endpoint_id)
     ON CONFLICT (endpoint_id, event_id) DO NOTHING
     RETURNING 1
   )
  SELECT s.partner_seq, s.tenant_id, s.partner_id, s.event_id, s.position, s.type, s."timestamp", s.data_json,
         (SELECT count(*) FROM queued) FROM ins s;
END
$fn$;
