-- The request that holds an idempotency key names itself: each claim or takeover sets a new token, and every later
-- write of the key (its move to a phase's result, its answer, its release, the lock's renewal) requires it. A request
-- that stalled past its lock's timeout, whose key another request took over, then writes nothing: its phase rolls back.
ALTER TABLE idempotency_keys ADD COLUMN lock_token text;
