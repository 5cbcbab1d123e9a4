-- The card each payment debited, as the merchant may see it: first six and last four digits (never the number). A
-- payment on the hosted page saves no card unless asked, so its card_id alone cannot say which card paid; the masked
-- number is copied from the card or the order's session when the payment is written, in the same statement.
ALTER TABLE payment_intents ADD COLUMN masked_pan text CHECK (masked_pan ~ '^[0-9]{6}\*{6}[0-9]{4}$');
UPDATE payment_intents p SET masked_pan = c.masked_pan FROM cards c WHERE c.id = p.card_id;
UPDATE payment_intents p SET masked_pan = s.masked_pan FROM checkout_sessions s WHERE s.order_id = p.order_id AND p.masked_pan IS NULL;
ALTER TABLE payment_intents ALTER COLUMN masked_pan SET NOT NULL;
