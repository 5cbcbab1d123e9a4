-- Two-step payments: a charge with capture 'manual' holds the amount at the bank (REQUIRES_CAPTURE) until a capture
-- takes at most that much, or a release (the merchant's cancel, or the expiry worker's) returns it.
ALTER TABLE payment_intents
  ADD COLUMN capture_method text NOT NULL DEFAULT 'automatic' CHECK (capture_method IN ('automatic', 'manual')),
  -- What the hold asked for, fixed once made: the amount reconciliation compares with the bank's hold.
  ADD COLUMN amount_held bigint CHECK (amount_held BETWEEN 1 AND 1000000000000),
  -- When the bank confirmed the hold: from then on the intent's debit phase is over, whatever its status.
  ADD COLUMN held_at timestamptz,
  DROP CONSTRAINT payment_intents_status_check,
  ADD CONSTRAINT payment_intents_status_check CHECK (status IN ('REQUIRES_PAYMENT', 'PROCESSING', 'REQUIRES_CAPTURE', 'SUCCEEDED', 'FAILED', 'CANCELED')),
  ADD CONSTRAINT payment_intents_hold_shape CHECK ((capture_method = 'manual') = (amount_held IS NOT NULL) AND (held_at IS NULL OR amount_held IS NOT NULL)),
  ADD CONSTRAINT payment_intents_capture_shape CHECK (status <> 'REQUIRES_CAPTURE' OR held_at IS NOT NULL);
-- The expiry worker's claim: holds older than TOLOV_HOLD_DAYS.
CREATE INDEX payment_intents_holds ON payment_intents (livemode, held_at) WHERE status = 'REQUIRES_CAPTURE';

-- The end of a hold: a capture (of `amount`, at most the held amount) or a release (of all of it), each a rail
-- operation with its own id, run as a debit is: recorded PENDING, called, settled once, or reconciled.
CREATE TABLE hold_ends (
  id                 text PRIMARY KEY, -- the rail operation id: cap_… or rel_…
  product_id         text NOT NULL REFERENCES products (id),
  livemode           boolean NOT NULL,
  payment_intent_id  text NOT NULL REFERENCES payment_intents (id),
  kind               text NOT NULL CHECK (kind IN ('capture', 'release')),
  -- Who ended it: the merchant (API or dashboard), or the expiry worker once the hold outlived TOLOV_HOLD_DAYS.
  reason             text NOT NULL CHECK (reason IN ('requested', 'expired')),
  amount             bigint NOT NULL CHECK (amount BETWEEN 1 AND 1000000000000),
  -- A capture's fee, at the product's rate when it was asked for; null for a release.
  fee                bigint CHECK (fee >= 0 AND fee <= amount),
  -- A capture's fiscal lines for its amount; null: the payment's own (or none).
  receipt_lines      jsonb,
  status             text NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  failure_code       text,
  reconcile_after    timestamptz,
  reconcile_count    integer NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'FAILED') = (failure_code IS NOT NULL)),
  CHECK (status = 'PENDING' OR reconcile_after IS NULL),
  CHECK ((kind = 'capture') = (fee IS NOT NULL)),
  CHECK (kind = 'capture' OR receipt_lines IS NULL)
);
-- Capture, cancel and expiry race for a hold: the database lets one end be under way or done at a time.
CREATE UNIQUE INDEX hold_ends_one_per_hold ON hold_ends (payment_intent_id) WHERE status <> 'FAILED';
CREATE INDEX hold_ends_to_reconcile ON hold_ends (reconcile_after) WHERE status = 'PENDING';

-- The test rail's holds and their ends.
ALTER TABLE test_rail_operations DROP CONSTRAINT test_rail_operations_type_check;
ALTER TABLE test_rail_operations ADD CONSTRAINT test_rail_operations_type_check CHECK (type IN ('debit', 'refund', 'transfer', 'hold', 'capture', 'release'));
ALTER TABLE test_rail_operations ADD COLUMN hold_operation_id text;
CREATE INDEX test_rail_operations_hold_ends ON test_rail_operations (hold_operation_id) WHERE hold_operation_id IS NOT NULL;

-- An order paid on the hosted page may hold the buyer's money too: PAID once the bank holds it, its payment
-- REQUIRES_CAPTURE until the merchant captures or cancels it.
ALTER TABLE orders ADD COLUMN capture_method text NOT NULL DEFAULT 'automatic' CHECK (capture_method IN ('automatic', 'manual'));
