-- Money moves: payment intents (charges, the legacy pair, later orders), refunds, the event outbox, and balances kept
-- in the same transactions as the ledger entries.

CREATE TABLE payment_intents (
  seq               bigserial NOT NULL UNIQUE,
  id                text PRIMARY KEY, -- also the rail operation id of its debit: made by Tolov, never by a client
  product_id        text NOT NULL REFERENCES products (id),
  livemode          boolean NOT NULL,
  amount            bigint NOT NULL CHECK (amount BETWEEN 1 AND 1000000000000),
  fee               bigint NOT NULL CHECK (fee >= 0 AND fee <= amount),
  currency          text NOT NULL CHECK (currency = 'UZS'),
  status            text NOT NULL CHECK (status IN ('REQUIRES_PAYMENT', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'CANCELED')),
  failure_code      text,
  card_id           text NOT NULL REFERENCES cards (id),
  rail              text NOT NULL CHECK (rail IN ('uzcard', 'humo')),
  description       text CHECK (length(description) <= 500),
  metadata          jsonb NOT NULL DEFAULT '{}',
  amount_refunded   bigint NOT NULL DEFAULT 0 CHECK (amount_refunded >= 0 AND amount_refunded <= amount),
  -- When the reconciler may next ask the rail about a PROCESSING debit: never while the debit may still be in flight.
  reconcile_after   timestamptz,
  reconcile_count   integer NOT NULL DEFAULT 0,
  succeeded_at      timestamptz,
  settled_at        timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'FAILED') = (failure_code IS NOT NULL)),
  CHECK ((status = 'SUCCEEDED') = (succeeded_at IS NOT NULL)),
  CHECK (status = 'PROCESSING' OR reconcile_after IS NULL)
);
CREATE INDEX payment_intents_list ON payment_intents (product_id, livemode, seq DESC);
CREATE INDEX payment_intents_to_reconcile ON payment_intents (reconcile_after) WHERE status = 'PROCESSING';
CREATE INDEX payment_intents_to_settle ON payment_intents (succeeded_at) WHERE status = 'SUCCEEDED' AND settled_at IS NULL;

CREATE TABLE refunds (
  seq                 bigserial NOT NULL UNIQUE,
  id                  text PRIMARY KEY, -- also the rail operation id of the refund
  product_id          text NOT NULL REFERENCES products (id),
  livemode            boolean NOT NULL,
  payment_intent_id   text NOT NULL REFERENCES payment_intents (id),
  amount              bigint NOT NULL CHECK (amount > 0),
  currency            text NOT NULL CHECK (currency = 'UZS'),
  status              text NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
  failure_code        text,
  reason              text CHECK (length(reason) <= 500),
  reconcile_after     timestamptz,
  reconcile_count     integer NOT NULL DEFAULT 0,
  created_at          timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'FAILED') = (failure_code IS NOT NULL)),
  CHECK (status = 'PENDING' OR reconcile_after IS NULL)
);
CREATE INDEX refunds_list ON refunds (product_id, livemode, seq DESC);
-- Full refunds only: a payment has at most one refund that has not failed.
CREATE UNIQUE INDEX refunds_one_per_payment ON refunds (payment_intent_id) WHERE status <> 'FAILED';
CREATE INDEX refunds_to_reconcile ON refunds (reconcile_after) WHERE status = 'PENDING';

-- The outbox: every event is written in the transaction of the state change it reports.
CREATE TABLE events (
  seq         bigserial NOT NULL UNIQUE,
  id          text PRIMARY KEY,
  product_id  text NOT NULL REFERENCES products (id),
  livemode    boolean NOT NULL,
  type        text NOT NULL,
  object_id   text NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_list ON events (product_id, livemode, seq DESC);
CREATE INDEX events_object ON events (object_id);

-- Balances per account, split into shards so that concurrent payments of one merchant rarely wait on one row.
-- Updated in the statement that writes the entries; GET /v1/balance sums a few dozen rows, however long the ledger.
CREATE TABLE ledger_balances (
  product_id  text NOT NULL REFERENCES products (id),
  livemode    boolean NOT NULL,
  account     text NOT NULL REFERENCES ledger_accounts (code),
  shard       smallint NOT NULL CHECK (shard BETWEEN 0 AND 15),
  amount      bigint NOT NULL,
  PRIMARY KEY (product_id, livemode, account, shard)
);
