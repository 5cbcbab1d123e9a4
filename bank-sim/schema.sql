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
-- The hold a capture or release ended (a hold's amount stays off the card's balance until one of them does).
ALTER TABLE sim_operations ADD COLUMN IF NOT EXISTS hold_operation_id text;
CREATE UNIQUE INDEX IF NOT EXISTS sim_operations_one_end_per_hold ON sim_operations (hold_operation_id) WHERE status = 'SUCCEEDED';
-- Merchants' accounts (MFO/number), opened by their first payout and credited by each one.
CREATE TABLE IF NOT EXISTS sim_accounts (
  account      text PRIMARY KEY,
  holder_name  text NOT NULL,
  balance      bigint NOT NULL
);
-- Operation ids the bank was asked to fence before it executed them: it never executes them.
CREATE TABLE IF NOT EXISTS sim_fences (
  operation_id  text PRIMARY KEY,
  fenced_at     timestamptz NOT NULL DEFAULT now()
);
-- The simulated fiscal module's register: each receipt id registered, or refused, once. Registered receipts are
-- numbered in the order of registration, as a cash register numbers its receipts.
CREATE SEQUENCE IF NOT EXISTS sim_receipt_numbers;
CREATE TABLE IF NOT EXISTS sim_receipts (
  receipt_id      text PRIMARY KEY,
  type            text NOT NULL,
  amount          bigint NOT NULL,
  status          text NOT NULL CHECK (status IN ('REGISTERED', 'REFUSED')),
  failure_code    text,
  terminal_id     text,
  receipt_number  bigint UNIQUE,
  fiscal_sign     text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'REFUSED') = (failure_code IS NOT NULL)),
  CHECK ((status = 'REGISTERED') = (terminal_id IS NOT NULL AND receipt_number IS NOT NULL AND fiscal_sign IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS sim_receipts_registered ON sim_receipts (created_at, receipt_number) WHERE status = 'REGISTERED';
-- Receipt ids the module was asked to fence before it registered them: it never registers them.
CREATE TABLE IF NOT EXISTS sim_receipt_fences (
  receipt_id  text PRIMARY KEY,
  fenced_at   timestamptz NOT NULL DEFAULT now()
);
