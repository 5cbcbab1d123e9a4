-- The API key whose request claimed an idempotency key: its stored answer (which may hold a secret, such as a new
-- webhook endpoint's) is replayed to that API key only. Null for keys claimed before it was kept. Only adds a column.
ALTER TABLE idempotency_keys ADD COLUMN api_key_id text;
