-- The live event stream (GET /v1/events/stream) reads each product's events in the order of the transactions that
-- wrote them, and only from transactions older than every one still running: those can no longer change, so a reader
-- that resumes after the last event it sent misses none. `seq` alone cannot say that: a transaction may commit an
-- event with a lower seq after one with a higher seq is visible.
--
-- Events written before this column existed have none; a stream never starts before them.
ALTER TABLE events ADD COLUMN txid xid8;
ALTER TABLE events ALTER COLUMN txid SET DEFAULT pg_current_xact_id();
CREATE INDEX events_stream ON events (product_id, livemode, txid, seq);

-- Streams in every process wake when events of their product and mode commit. One notification per product and mode
-- a statement wrote to (PostgreSQL folds equal ones in a transaction); a stream also looks every few seconds, so a
-- notification lost with a dropped connection costs only time.
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tolov_events', k)
     FROM (SELECT DISTINCT product_id || CASE WHEN livemode THEN '/live' ELSE '/test' END AS k FROM inserted) AS keys;
  RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION events_notify();
