-- A payment's metadata is kept as the merchant sent it: json keeps its text, keys in the merchant's order, where jsonb
-- reorders them (the API's answers and the events' snapshots showed another order than the one sent). Every write of an
-- earlier release still works: jsonb is cast to json on assignment.
ALTER TABLE payment_intents ALTER COLUMN metadata TYPE json USING metadata::json;
