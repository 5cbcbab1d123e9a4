-- When a payment's debit went to the bank: a charge's or an order payment's when it is made, a payment intent's when it
-- is confirmed, which may be days after it was created. Reconciliation dates a debit by it, as the bank dates it by its
-- execution; earlier debits (null) are dated by their creation, which their debit followed at once.
ALTER TABLE payment_intents ADD COLUMN debit_started_at timestamptz;
