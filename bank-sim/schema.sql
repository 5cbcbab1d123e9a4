-- The bank simulator's own books. Cards are found by a hash of their number; the number itself is not kept.
CREATE TABLE IF NOT EXISTS sim_cards (
  pan_hash   text PRIMARY KEY,
  last4      text NOT NULL,
  network    text NOT NULL,
  behaviour  text NOT NULL,
  phone      text NOT NULL,
  status     text NOT NULL,
  balance    bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS sim_tokens (
  token      text PRIMARY KEY,
  pan_hash   text NOT NULL REFERENCES sim_cards (pan_hash),
  phone      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sim_sms (
  id       bigserial PRIMARY KEY,
  phone    text NOT NULL,
  token    text NOT NULL,
  code     text NOT NULL,
  sent_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sim_operations (
  operation_id  text PRIMARY KEY,
  type          text NOT NULL,
  token         text NOT NULL,
  amount        bigint NOT NULL,
  status        text NOT NULL,
  failure_code  text,
  created_at    timestamptz NOT NULL DEFAULT now()
);
-- Operation ids the bank was asked to fence before it executed them: it never executes them.
CREATE TABLE IF NOT EXISTS sim_fences (
  operation_id  text PRIMARY KEY,
  fenced_at     timestamptz NOT NULL DEFAULT now()
);
