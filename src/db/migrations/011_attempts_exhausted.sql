-- A checkout session whose buyer used up the card or code attempts is FAILED, and says why; so does the order it was
-- paying, which can no longer be paid (an order refused by the bank says its payment's refusal). Only adds columns.
ALTER TABLE checkout_sessions ADD COLUMN failure_code text;
ALTER TABLE orders ADD COLUMN failure_code text;
