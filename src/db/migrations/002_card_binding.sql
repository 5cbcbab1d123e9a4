-- Card binding: hosted card capture sessions of both kinds, saved cards, and the test rail's own books.
-- No column anywhere holds a card number or a phone number: the rail token stands in for them.

ALTER TABLE checkout_sessions ALTER COLUMN order_id DROP NOT NULL;
ALTER TABLE checkout_sessions
  ADD COLUMN kind           text NOT NULL DEFAULT 'order' CHECK (kind IN ('order', 'card_binding')),
  ADD COLUMN card_attempts  integer NOT NULL DEFAULT 0 CHECK (card_attempts >= 0),
  ADD COLUMN code_attempts  integer NOT NULL DEFAULT 0 CHECK (code_attempts >= 0),
  ADD COLUMN code_sends     integer NOT NULL DEFAULT 0 CHECK (code_sends >= 0),
  ADD COLUMN code_sent_at   timestamptz,
  ADD COLUMN rail_token     text,
  ADD COLUMN network        text CHECK (network IN ('uzcard', 'humo')),
  ADD COLUMN masked_pan     text CHECK (masked_pan ~ '^[0-9]{6}\*{6}[0-9]{4}$'),
  ADD COLUMN card_expiry    text CHECK (card_expiry ~ '^[0-9]{2}/[0-9]{2}$'),
  ADD COLUMN completed_at   timestamptz;
ALTER TABLE checkout_sessions ALTER COLUMN kind DROP DEFAULT;
CREATE INDEX checkout_sessions_open_expiry ON checkout_sessions (expires_at) WHERE status IN ('PENDING', 'AWAITING_CODE');

CREATE TABLE cards (
  seq            bigserial NOT NULL UNIQUE,
  id             text PRIMARY KEY,
  product_id     text NOT NULL REFERENCES products (id),
  livemode       boolean NOT NULL,
  status         text NOT NULL CHECK (status IN ('ACTIVE', 'BLOCKED', 'DELETED')),
  rail           text NOT NULL CHECK (rail IN ('uzcard', 'humo')),
  rail_token     text NOT NULL,
  masked_pan     text NOT NULL CHECK (masked_pan ~ '^[0-9]{6}\*{6}[0-9]{4}$'),
  expiry         text NOT NULL CHECK (expiry ~ '^[0-9]{2}/[0-9]{2}$'),
  customer_ref   text CHECK (length(customer_ref) <= 255),
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cards_list ON cards (product_id, livemode, seq DESC);

CREATE TABLE card_bindings (
  seq             bigserial NOT NULL UNIQUE,
  id              text PRIMARY KEY,
  product_id      text NOT NULL REFERENCES products (id),
  livemode        boolean NOT NULL,
  checkout_token  text NOT NULL UNIQUE,
  customer_ref    text CHECK (length(customer_ref) <= 255),
  return_url      text CHECK (length(return_url) <= 2048),
  card_id         text REFERENCES cards (id),
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_bindings_list ON card_bindings (product_id, livemode, seq DESC);

ALTER TABLE checkout_sessions ADD COLUMN binding_id text UNIQUE REFERENCES card_bindings (id);
ALTER TABLE checkout_sessions ADD CONSTRAINT checkout_sessions_one_subject CHECK (
  (kind = 'order' AND order_id IS NOT NULL AND binding_id IS NULL) OR
  (kind = 'card_binding' AND binding_id IS NOT NULL AND order_id IS NULL));

-- The test rail is a bank of its own: it keeps what it was told (never the card number) so that it can answer
-- reconciliation truthfully after a restart.
CREATE TABLE test_rail_cards (
  token       text PRIMARY KEY,
  network     text NOT NULL,
  behaviour   text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE test_rail_operations (
  operation_id   text PRIMARY KEY,
  type           text NOT NULL CHECK (type IN ('debit', 'refund')),
  token          text NOT NULL REFERENCES test_rail_cards (token),
  amount         bigint NOT NULL CHECK (amount > 0),
  status         text NOT NULL CHECK (status IN ('SUCCEEDED', 'FAILED')),
  failure_code   text,
  created_at     timestamptz NOT NULL DEFAULT now()
);
