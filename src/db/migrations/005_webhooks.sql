-- Webhooks: endpoints, one delivery per event and subscribed endpoint (written in the event's transaction), and every
-- attempt made.

CREATE TABLE webhook_endpoints (
  seq                     bigserial NOT NULL UNIQUE,
  id                      text PRIMARY KEY,
  product_id              text NOT NULL REFERENCES products (id),
  livemode                boolean NOT NULL,
  url                     text NOT NULL CHECK (length(url) <= 2048),
  enabled_events          text[] NOT NULL DEFAULT '{}', -- empty: every type
  description             text CHECK (length(description) <= 500),
  status                  text NOT NULL CHECK (status IN ('enabled', 'disabled', 'deleted')),
  -- The signing key must be read back to sign, so it is stored; it is shown to the merchant only when made.
  secret                  text NOT NULL,
  -- After a roll, deliveries are signed with both secrets until the previous one expires.
  previous_secret         text,
  previous_secret_until   timestamptz,
  created_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_list ON webhook_endpoints (product_id, livemode, seq DESC) WHERE status <> 'deleted';

CREATE TABLE webhook_deliveries (
  seq              bigserial NOT NULL UNIQUE,
  id               text PRIMARY KEY,
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id),
  event_id         text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  -- A worker holds a delivery until this time while it makes the attempt; another worker skips it meanwhile.
  locked_until     timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_of_endpoint ON webhook_deliveries (endpoint_id, seq DESC);
CREATE INDEX webhook_deliveries_of_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
  id            bigserial PRIMARY KEY,
  delivery_id   text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  number        integer NOT NULL,
  attempted_at  timestamptz NOT NULL,
  status_code   integer,
  duration_ms   integer NOT NULL,
  error         text CHECK (length(error) <= 500),
  UNIQUE (delivery_id, number)
);

CREATE INDEX events_created ON events (created_at);
CREATE INDEX events_type_list ON events (product_id, livemode, type, seq DESC);

-- An event's data is sent as the API returned it: json keeps its text (and key order), where jsonb would reorder keys.
ALTER TABLE events ALTER COLUMN data TYPE json USING data::json;
