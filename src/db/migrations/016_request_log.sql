-- The request log: each product's and mode's latest API calls, as the dashboard and `tolov logs tail` show them.
-- Written in batches off the request's path; only the latest 1,000 per product and mode are kept. No bodies, no
-- headers but the Idempotency-Key, no query strings.
CREATE TABLE request_log (
  seq             bigserial NOT NULL,
  id              text NOT NULL,
  product_id      text NOT NULL,
  livemode        boolean NOT NULL,
  method          text NOT NULL,
  path            text NOT NULL,
  status          smallint NOT NULL,
  duration_ms     integer NOT NULL,
  idempotency_key text,
  created_at      timestamptz NOT NULL
);
CREATE INDEX request_log_list ON request_log (product_id, livemode, created_at DESC, seq DESC);
