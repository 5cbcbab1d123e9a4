-- Orders paid on the hosted page: an order's payment intent debits the card captured by its session, which is saved
-- as a card only when the buyer asks. The intent therefore carries the rail token itself, and a card only if saved.

ALTER TABLE payment_intents ADD COLUMN rail_token text;
UPDATE payment_intents i SET rail_token = c.rail_token FROM cards c WHERE c.id = i.card_id;
ALTER TABLE payment_intents ALTER COLUMN rail_token SET NOT NULL;
ALTER TABLE payment_intents ALTER COLUMN card_id DROP NOT NULL;
-- At most one payment intent per order, ever: an order is debited at most once.
ALTER TABLE payment_intents ADD COLUMN order_id text UNIQUE REFERENCES orders (id);
ALTER TABLE payment_intents ADD CONSTRAINT payment_intents_card_or_order CHECK (card_id IS NOT NULL OR order_id IS NOT NULL);

-- The buyer asked, with the card, to keep it for the order's customerRef.
ALTER TABLE checkout_sessions ADD COLUMN save_card boolean NOT NULL DEFAULT false;
