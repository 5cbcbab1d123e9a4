-- Fewer index entries per write on the money path. `seq` comes from a sequence, so it is unique by construction, and
-- every list reads it through its own (product_id, livemode, seq DESC) or (endpoint_id, seq DESC) index: the unique
-- index on it only added one entry, and one uniqueness check, to every insert and to every update that cannot stay on
-- its page (finishing a payment intent). An intent without an order (every charge) no longer writes an entry for its
-- empty order into the unique index of the intent's order, which now holds intents that have one.
-- Only drops and narrows indexes: every statement an earlier release runs still works.
ALTER TABLE orders DROP CONSTRAINT orders_seq_key;
ALTER TABLE cards DROP CONSTRAINT cards_seq_key;
ALTER TABLE card_bindings DROP CONSTRAINT card_bindings_seq_key;
ALTER TABLE payment_intents DROP CONSTRAINT payment_intents_seq_key;
ALTER TABLE refunds DROP CONSTRAINT refunds_seq_key;
ALTER TABLE events DROP CONSTRAINT events_seq_key;
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_seq_key;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_seq_key;

CREATE UNIQUE INDEX payment_intents_order ON payment_intents (order_id) WHERE order_id IS NOT NULL;
ALTER TABLE payment_intents DROP CONSTRAINT payment_intents_order_id_key;
