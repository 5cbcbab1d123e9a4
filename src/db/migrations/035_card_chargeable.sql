-- A charge's intent is written in the round trip of its transaction's COMMIT, with the card it is charged to read in
-- the same statement: the statement itself must then fail when the card cannot be charged, so that the transaction
-- rolls back with it. The error's SQLSTATE, TC001, tells the service which failure it is, and its detail the card's
-- status ('' when the product has no such card).
CREATE FUNCTION card_chargeable(status text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF status IS DISTINCT FROM 'ACTIVE' THEN
    RAISE EXCEPTION 'the card cannot be charged' USING ERRCODE = 'TC001', DETAIL = coalesce(status, '');
  END IF;
  RETURN true;
END $$;
