-- A request's move of its idempotency key goes to the server with its transaction's COMMIT, in one round trip: the
-- statement itself must then fail when the key is no longer this request's (another request took it over after its
-- lock lapsed), so that the transaction rolls back with it. The error's SQLSTATE, TK001, tells the service which
-- failure it is.
CREATE FUNCTION idempotency_key_held(moved bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF moved = 0 THEN
    RAISE EXCEPTION 'the idempotency key is no longer held by this request' USING ERRCODE = 'TK001';
  END IF;
  RETURN true;
END $$;
