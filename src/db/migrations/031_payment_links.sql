-- Payment links: a merchant's reusable link (`/l/{slug}`) that opens an order for each buyer who presses Pay on its
-- page. A fixed amount may carry the orders' fiscal lines; without one the buyer chooses within [amount_min, amount_max].
CREATE TABLE payment_links (
  seq            bigserial NOT NULL UNIQUE, -- strict total order for newest-first lists
  id             text PRIMARY KEY,
  product_id     text NOT NULL REFERENCES products (id),
  livemode       boolean NOT NULL,
  slug           text NOT NULL UNIQUE,
  amount         bigint CHECK (amount BETWEEN 1 AND 1000000000000),
  amount_min     bigint,
  amount_max     bigint,
  description    text NOT NULL CHECK (length(description) BETWEEN 1 AND 500),
  receipt_lines  jsonb,
  active         boolean NOT NULL,
  -- At most this many of its orders PENDING or PAID at once; NULL: no limit.
  quantity_max   integer CHECK (quantity_max BETWEEN 1 AND 1000000),
  created_at     timestamptz NOT NULL DEFAULT now(),
  CHECK (amount IS NULL OR (amount_min IS NULL AND amount_max IS NULL)),
  CHECK (amount IS NOT NULL OR (amount_min >= 1 AND amount_min <= amount_max)),
  CHECK (receipt_lines IS NULL OR amount IS NOT NULL)
);
CREATE INDEX payment_links_list ON payment_links (product_id, livemode, created_at DESC, seq DESC);
CREATE INDEX payment_links_by_active ON payment_links (product_id, livemode, active, created_at DESC, seq DESC);

-- The link an order was opened through. A link belongs to one product and mode: its id alone finds its orders, for
-- the list filtered by it and for counting the places its orders hold.
ALTER TABLE orders ADD COLUMN payment_link_id text REFERENCES payment_links (id);
CREATE INDEX orders_by_payment_link ON orders (payment_link_id, created_at DESC, seq DESC) WHERE payment_link_id IS NOT NULL;
