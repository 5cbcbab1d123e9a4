-- The work queues' indexes, with predicates that a lookup by id cannot imply. Indexed `WHERE status = 'PROCESSING'`,
-- the queue of debits awaiting the bank could serve `WHERE id = $1 AND status = 'PROCESSING'`: when the statistics
-- were taken with the queue nearly empty (as it usually is), the planner scanned the whole queue for each lookup, so
-- during a bank outage every finished debit read every waiting one. The CHECK constraints tie each timestamp to its
-- status (set only while waiting), so the workers' range conditions select exactly the rows they did.
DROP INDEX payment_intents_to_reconcile;
CREATE INDEX payment_intents_to_reconcile ON payment_intents (reconcile_after) WHERE reconcile_after IS NOT NULL;
DROP INDEX refunds_to_reconcile;
CREATE INDEX refunds_to_reconcile ON refunds (reconcile_after) WHERE reconcile_after IS NOT NULL;
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
