-- Lists are newest first by creation time, then seq (a strict order for rows created in the same instant), and take
-- filters (CONTRACT §7). Each list's index leads with product and mode, then the column a filter compares, then the
-- list's order: a filtered page, or a page within a creation range, is one index range however many rows a product has.
DROP INDEX orders_list;
CREATE INDEX orders_list ON orders (product_id, livemode, created_at DESC, seq DESC);
CREATE INDEX orders_by_status ON orders (product_id, livemode, status, created_at DESC, seq DESC);
CREATE INDEX orders_by_customer ON orders (product_id, livemode, customer_ref, created_at DESC, seq DESC) WHERE customer_ref IS NOT NULL;

DROP INDEX payment_intents_list;
CREATE INDEX payment_intents_list ON payment_intents (product_id, livemode, created_at DESC, seq DESC);
CREATE INDEX payment_intents_by_status ON payment_intents (product_id, livemode, status, created_at DESC, seq DESC);
-- A card belongs to one product and mode: its id alone finds its charges.
CREATE INDEX payment_intents_by_card ON payment_intents (card_id, created_at DESC, seq DESC);

DROP INDEX refunds_list;
CREATE INDEX refunds_list ON refunds (product_id, livemode, created_at DESC, seq DESC);
CREATE INDEX refunds_by_status ON refunds (product_id, livemode, status, created_at DESC, seq DESC);
CREATE INDEX refunds_by_payment ON refunds (payment_intent_id);

DROP INDEX cards_list;
CREATE INDEX cards_list ON cards (product_id, livemode, created_at DESC, seq DESC);
CREATE INDEX cards_by_customer ON cards (product_id, livemode, customer_ref, created_at DESC, seq DESC) WHERE customer_ref IS NOT NULL;

DROP INDEX events_list;
CREATE INDEX events_list ON events (product_id, livemode, created_at DESC, seq DESC);
DROP INDEX events_type_list;
CREATE INDEX events_type_list ON events (product_id, livemode, type, created_at DESC, seq DESC);

DROP INDEX webhook_endpoints_list;
CREATE INDEX webhook_endpoints_list ON webhook_endpoints (product_id, livemode, created_at DESC, seq DESC) WHERE status <> 'deleted';
