-- migrate: outside a transaction
-- Fewer index entries per write on the money path: a charge writes three ledger entries, a statement row and its
-- idempotency key, and every index of their tables takes an entry from each.
-- - ledger_entries: nothing reads an entry by its id alone or by account (the balances are kept in ledger_balances), and
--   every read goes through its transaction: one key on (transaction_id, id) serves what the id key, the account index
--   and the transaction index served. Six entries less per charge, two for each of its three ledger entries.
-- - balance_transactions: `seq` comes from a sequence and every list reads it through its own indexes, as in 009: its
--   unique index only added an entry to each insert, and to each settlement's and payout's update.
-- - idempotency_keys: a key is only ever found by (product, mode, key), which becomes its primary key; `id` stays a
--   column for an earlier release's cleanup, which still runs during a rolling deploy.
-- The new keys are built while the tables are written and swapped in, each swap holding its table's lock for an instant;
-- an earlier release serves every state in between.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS ledger_entries_transaction_id_id ON ledger_entries (transaction_id, id);
ALTER TABLE ledger_entries
  DROP CONSTRAINT ledger_entries_pkey,
  ADD CONSTRAINT ledger_entries_pkey PRIMARY KEY USING INDEX ledger_entries_transaction_id_id;
DROP INDEX CONCURRENTLY IF EXISTS ledger_entries_transaction;
DROP INDEX CONCURRENTLY IF EXISTS ledger_entries_account;
ALTER TABLE balance_transactions DROP CONSTRAINT balance_transactions_seq_key;
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS idempotency_keys_by_key ON idempotency_keys (product_id, livemode, key);
ALTER TABLE idempotency_keys
  DROP CONSTRAINT idempotency_keys_pkey,
  ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY USING INDEX idempotency_keys_by_key,
  DROP CONSTRAINT idempotency_keys_product_id_livemode_key_key;
