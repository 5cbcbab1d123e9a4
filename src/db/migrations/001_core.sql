-- Platform core: products and their API keys, idempotency keys, orders with their checkout sessions, and the ledger.
-- Every merchant-owned row carries product_id and livemode; every query filters by both.

CREATE TABLE products (
  id          text PRIMARY KEY,
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  scopes      text[] NOT NULL,
  fee_bps     integer NOT NULL CHECK (fee_bps BETWEEN 0 AND 10000),
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id           text PRIMARY KEY,
  product_id   text NOT NULL REFERENCES products (id),
  livemode     boolean NOT NULL,
  secret_hash  bytea NOT NULL UNIQUE, -- SHA-256 of the secret; the secret itself is shown once and never stored
  scopes       text[] NOT NULL,
  revoked_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_product ON api_keys (product_id);

CREATE TABLE idempotency_keys (
  id               bigserial PRIMARY KEY,
  product_id       text NOT NULL REFERENCES products (id),
  livemode         boolean NOT NULL,
  key              text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  request_method   text NOT NULL,
  request_path     text NOT NULL,
  request_hash     bytea NOT NULL,
  -- The last atomic phase that committed; a crashed request resumes from here instead of starting again.
  recovery_point   text NOT NULL,
  resource_id      text,
  locked_at        timestamptz,
  response_status  integer,
  response_body    text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (product_id, livemode, key),
  CHECK ((response_status IS NULL) = (response_body IS NULL))
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE orders (
  seq                bigserial NOT NULL UNIQUE, -- strict total order for newest-first lists
  id                 text PRIMARY KEY,
  product_id         text NOT NULL REFERENCES products (id),
  livemode           boolean NOT NULL,
  amount             bigint NOT NULL CHECK (amount BETWEEN 1 AND 1000000000000),
  currency           text NOT NULL CHECK (currency = 'UZS'),
  status             text NOT NULL CHECK (status IN ('PENDING', 'PAID', 'FAILED', 'EXPIRED', 'CANCELED')),
  description        text CHECK (length(description) <= 500),
  customer_ref       text CHECK (length(customer_ref) <= 255),
  return_url         text CHECK (length(return_url) <= 2048),
  checkout_token     text NOT NULL UNIQUE,
  save_card          boolean NOT NULL DEFAULT false,
  payment_intent_id  text,
  saved_card_id      text,
  paid_at            timestamptz,
  expires_at         timestamptz NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'PAID') = (paid_at IS NOT NULL))
);
CREATE INDEX orders_list ON orders (product_id, livemode, seq DESC);
CREATE INDEX orders_pending_expiry ON orders (expires_at) WHERE status = 'PENDING';

-- The public side of hosted capture: the token in /pay/{token} and /checkout/v1/sessions/{token}.
CREATE TABLE checkout_sessions (
  token       text PRIMARY KEY,
  product_id  text NOT NULL REFERENCES products (id),
  livemode    boolean NOT NULL,
  order_id    text NOT NULL UNIQUE REFERENCES orders (id),
  status      text NOT NULL CHECK (status IN ('PENDING', 'AWAITING_CODE', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED')),
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Ledger: a chart of accounts, and append-only transactions whose entries sum to zero.
CREATE TABLE ledger_accounts (
  code         text PRIMARY KEY,
  description  text NOT NULL
);
INSERT INTO ledger_accounts (code, description) VALUES
  ('merchant_pending',   'owed to the merchant, not yet settled'),
  ('merchant_available', 'owed to the merchant, settled'),
  ('rail_clearing',      'money moving through the card rails (debits from and refunds to buyers)'),
  ('platform_fees',      'Tolov''s fee revenue');

CREATE TABLE ledger_transactions (
  id            text PRIMARY KEY,
  product_id    text NOT NULL REFERENCES products (id),
  livemode      boolean NOT NULL,
  reason        text NOT NULL,
  reference_id  text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (id, product_id, livemode)
);
CREATE INDEX ledger_transactions_reference ON ledger_transactions (reference_id);

CREATE TABLE ledger_entries (
  id              bigserial PRIMARY KEY,
  transaction_id  text NOT NULL,
  product_id      text NOT NULL,
  livemode        boolean NOT NULL,
  account         text NOT NULL REFERENCES ledger_accounts (code),
  amount          bigint NOT NULL CHECK (amount <> 0), -- positive credits the account, negative debits it
  FOREIGN KEY (transaction_id, product_id, livemode) REFERENCES ledger_transactions (id, product_id, livemode)
);
CREATE INDEX ledger_entries_account ON ledger_entries (product_id, livemode, account);
CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);

-- Checked at commit, so a transaction's entries may be inserted in any order but must balance in the end.
CREATE FUNCTION ledger_transaction_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric;
BEGIN
  SELECT sum(amount) INTO total FROM ledger_entries WHERE transaction_id = NEW.transaction_id;
  IF total <> 0 THEN
    RAISE EXCEPTION 'ledger transaction % is unbalanced by %', NEW.transaction_id, total USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_transaction_balanced();

CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only: % on % refused', TG_OP, TG_TABLE_NAME USING ERRCODE = '42501';
END $$;
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
