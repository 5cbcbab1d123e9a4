-- Fiscal receipts. The lines a merchant sends with an order or a charge are kept with it; once its payment succeeds,
-- the payment's transaction writes a PENDING sale receipt with those lines (and a refund's success, a return receipt),
-- and the fiscalization worker registers it with the fiscal module afterwards, outside the money's phases.
-- Products made from now on must send lines in live mode. Existing ones keep taking live payments without them (their
-- integrations send none yet) until the operator requires them: an upgrade must not refuse every live call.
ALTER TABLE products ADD COLUMN receipt_required boolean NOT NULL DEFAULT false;
ALTER TABLE products ALTER COLUMN receipt_required SET DEFAULT true;
ALTER TABLE orders ADD COLUMN receipt_lines jsonb, ADD COLUMN receipt_id text;
ALTER TABLE payment_intents ADD COLUMN receipt_lines jsonb, ADD COLUMN receipt_id text;
ALTER TABLE refunds ADD COLUMN receipt_id text;

CREATE TABLE receipts (
  seq                bigserial NOT NULL UNIQUE,
  id                 text PRIMARY KEY, -- also the id the fiscal module registers it under: made by Tolov, once
  product_id         text NOT NULL REFERENCES products (id),
  livemode           boolean NOT NULL,
  type               text NOT NULL CHECK (type IN ('sale', 'return')),
  status             text NOT NULL CHECK (status IN ('PENDING', 'FISCALIZED', 'FAILED')),
  payment_intent_id  text NOT NULL REFERENCES payment_intents (id),
  refund_id          text REFERENCES refunds (id),
  lines              jsonb NOT NULL,
  amount             bigint NOT NULL CHECK (amount BETWEEN 1 AND 1000000000000),
  vat_amount         bigint NOT NULL CHECK (vat_amount >= 0 AND vat_amount <= amount),
  masked_pan         text NOT NULL,
  -- Opens the buyer's printable page without a login: as long as a checkout token.
  public_token       text NOT NULL UNIQUE,
  terminal_id        text,
  receipt_number     text,
  fiscal_sign        text,
  fiscalized_at      timestamptz,
  failure_code       text,
  -- Attempts made at the fiscal module, and when the worker may make the next (NULL once final).
  attempts           integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at    timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  CHECK ((type = 'sale') = (refund_id IS NULL)),
  CHECK ((status = 'PENDING') = (next_attempt_at IS NOT NULL)),
  CHECK ((status = 'FAILED') = (failure_code IS NOT NULL)),
  CHECK ((status = 'FISCALIZED') = (terminal_id IS NOT NULL AND receipt_number IS NOT NULL AND fiscal_sign IS NOT NULL AND fiscalized_at IS NOT NULL))
);
-- One sale receipt per payment, one return receipt per refund, whatever retries and crashes do.
CREATE UNIQUE INDEX receipts_one_sale ON receipts (payment_intent_id) WHERE type = 'sale';
CREATE UNIQUE INDEX receipts_one_return ON receipts (refund_id) WHERE refund_id IS NOT NULL;
CREATE INDEX receipts_by_payment ON receipts (payment_intent_id);
CREATE INDEX receipts_due ON receipts (next_attempt_at) WHERE status = 'PENDING';
CREATE INDEX receipts_fiscalized ON receipts (fiscalized_at) WHERE status = 'FISCALIZED';
CREATE INDEX receipts_list ON receipts (product_id, livemode, created_at DESC, seq DESC);
CREATE INDEX receipts_by_status ON receipts (product_id, livemode, status, created_at DESC, seq DESC);
CREATE INDEX receipts_by_type ON receipts (product_id, livemode, type, created_at DESC, seq DESC);

-- The test fiscal module's register: each receipt id registered once, or fenced before it ever was.
CREATE TABLE test_fiscal_receipts (
  receipt_id      text PRIMARY KEY,
  status          text NOT NULL CHECK (status IN ('REGISTERED', 'REFUSED', 'FENCED')),
  type            text CHECK (type IN ('sale', 'return')),
  amount          bigint,
  receipt_number  bigserial NOT NULL,
  failure_code    text,
  registered_at   timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'REFUSED') = (failure_code IS NOT NULL)),
  CHECK ((status = 'FENCED') = (type IS NULL AND amount IS NULL))
);
CREATE INDEX test_fiscal_receipts_registered ON test_fiscal_receipts (registered_at) WHERE status = 'REGISTERED';
