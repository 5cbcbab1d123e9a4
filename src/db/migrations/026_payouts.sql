-- Payouts: the merchant's available money sent to the product's payout account. Creating one moves its amount from
-- merchant_available to payouts_in_transit; PAID moves it out to bank_payouts; FAILED or CANCELED moves it back.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_account_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_account_check
  CHECK (account IN ('merchant_pending', 'merchant_available', 'rail_clearing', 'platform_fees', 'payouts_in_transit', 'bank_payouts'));
INSERT INTO ledger_accounts (code, description) VALUES
  ('payouts_in_transit', 'payouts taken from the available balance and not yet paid by the bank'),
  ('bank_payouts',       'money paid out to merchants'' bank accounts');

-- A payout keeps the destination it was made for: a later change of the account never redirects it.
CREATE TABLE payouts (
  seq              bigserial NOT NULL UNIQUE,
  id               text PRIMARY KEY,
  product_id       text NOT NULL REFERENCES products (id),
  livemode         boolean NOT NULL,
  amount           bigint NOT NULL CHECK (amount > 0),
  status           text NOT NULL CHECK (status IN ('PENDING', 'IN_TRANSIT', 'PAID', 'FAILED', 'CANCELED')),
  automatic        boolean NOT NULL,
  arrival_date     date NOT NULL,
  bank_mfo         text NOT NULL,
  account_number   text NOT NULL,
  tin              text NOT NULL,
  holder_name      text NOT NULL,
  failure_code     text,
  -- PENDING: when the sender takes it; IN_TRANSIT: when reconciliation asks the bank about it next.
  next_attempt_at  timestamptz,
  attempts         integer NOT NULL DEFAULT 0,
  sent_at          timestamptz,
  finished_at      timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'FAILED') = (failure_code IS NOT NULL)),
  CHECK ((status IN ('PENDING', 'IN_TRANSIT')) = (next_attempt_at IS NOT NULL)),
  CHECK ((status IN ('PAID', 'FAILED', 'CANCELED')) = (finished_at IS NOT NULL))
);
CREATE INDEX payouts_list ON payouts (product_id, livemode, created_at DESC, seq DESC);
CREATE INDEX payouts_due ON payouts (next_attempt_at) WHERE status IN ('PENDING', 'IN_TRANSIT');
CREATE INDEX payouts_sent ON payouts (livemode, sent_at) WHERE sent_at IS NOT NULL;

-- The daily automatic payout, once per product, mode and Tashkent day: the row is written in the transaction that
-- makes the payout (or finds nothing to pay out), so two processes running the day at once make one payout.
CREATE TABLE payout_runs (
  product_id  text NOT NULL REFERENCES products (id),
  livemode    boolean NOT NULL,
  day         date NOT NULL,
  payout_id   text REFERENCES payouts (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (product_id, livemode, day)
);

-- What the next automatic payout pays out: available rows no payout has paid out yet.
CREATE INDEX balance_transactions_unpaid ON balance_transactions (product_id, livemode) WHERE payout_id IS NULL AND status = 'available';

-- The test rail executes transfers to bank accounts too; they carry no card token.
ALTER TABLE test_rail_operations DROP CONSTRAINT test_rail_operations_type_check;
ALTER TABLE test_rail_operations ADD CONSTRAINT test_rail_operations_type_check CHECK (type IN ('debit', 'refund', 'transfer'));
