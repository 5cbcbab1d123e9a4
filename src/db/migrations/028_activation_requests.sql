-- A signed-up merchant's request to go live: who the business is, where its live payouts go. The operator approves it
-- (live mode on, the live payout account set from it) or rejects it with a reason, after which the merchant may correct
-- it and submit again. One row per product: its latest submission.
CREATE TABLE activation_requests (
  product_id        text PRIMARY KEY REFERENCES products (id),
  status            text NOT NULL CHECK (status IN ('submitted', 'approved', 'rejected')),
  legal_name        text NOT NULL CHECK (length(legal_name) BETWEEN 1 AND 200),
  tin               text NOT NULL CHECK (tin ~ '^[0-9]{9}$'),
  legal_address     text NOT NULL CHECK (length(legal_address) BETWEEN 1 AND 500),
  website           text NOT NULL CHECK (length(website) BETWEEN 1 AND 2048),
  category          text NOT NULL,
  bank_mfo          text NOT NULL CHECK (bank_mfo ~ '^[0-9]{5}$'),
  account_number    text NOT NULL CHECK (account_number ~ '^[0-9]{20}$'),
  holder_tin        text NOT NULL CHECK (holder_tin ~ '^[0-9]{9}$'),
  holder_name       text NOT NULL CHECK (length(holder_name) BETWEEN 1 AND 200),
  rejection_reason  text CHECK (length(rejection_reason) BETWEEN 1 AND 500),
  submitted_by      text NOT NULL,
  submitted_at      timestamptz NOT NULL,
  decided_at        timestamptz,
  CHECK ((status = 'rejected') = (rejection_reason IS NOT NULL)),
  CHECK ((status = 'submitted') = (decided_at IS NULL))
);
CREATE INDEX activation_requests_queue ON activation_requests (status, submitted_at);
