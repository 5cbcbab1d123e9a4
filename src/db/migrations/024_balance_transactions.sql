-- The statement: every movement of a merchant's balance as one row (a succeeded payment, a succeeded refund; later a
-- payout and its failure), written in the transaction that posts it to the ledger. A payment's row is pending until
-- settlement makes it available, in the settlement's transaction; so at every instant the available rows' net sums to
-- the balance's available and the pending rows' to its pending.
CREATE TABLE balance_transactions (
  seq           bigserial NOT NULL UNIQUE,
  id            text PRIMARY KEY,
  product_id    text NOT NULL REFERENCES products (id),
  livemode      boolean NOT NULL,
  type          text NOT NULL CHECK (type IN ('charge', 'refund', 'payout', 'payout_failure')),
  amount        bigint NOT NULL,
  fee           bigint NOT NULL CHECK (fee >= 0),
  net           bigint NOT NULL CHECK (net = amount - fee),
  status        text NOT NULL CHECK (status IN ('pending', 'available')),
  available_on  timestamptz NOT NULL,
  source        text NOT NULL, -- the payment intent, refund or payout that moved the balance
  payout_id     text,          -- the payout that paid it out
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source, type)
);
CREATE INDEX balance_transactions_list ON balance_transactions (product_id, livemode, created_at DESC, seq DESC);
CREATE INDEX balance_transactions_by_type ON balance_transactions (product_id, livemode, type, created_at DESC, seq DESC);
CREATE INDEX balance_transactions_by_payout ON balance_transactions (payout_id) WHERE payout_id IS NOT NULL;

-- The movements made before the statement existed, from their payments and refunds: each dated when it moved the
-- balance, its id carrying its source's. A payment not settled yet is forecast available a day after it succeeded (the
-- default TOLOV_SETTLEMENT_DELAY_SECONDS); settlement makes it available whatever the delay. Processes of an earlier
-- version write no rows: stop them before this migration runs (the statement would miss what they do meanwhile).
INSERT INTO balance_transactions (id, product_id, livemode, type, amount, fee, net, status, available_on, source, created_at)
SELECT 'txn_' || substr(i.id, 4), i.product_id, i.livemode, 'charge', i.amount, i.fee, i.amount - i.fee,
       CASE WHEN i.settled_at IS NULL THEN 'pending' ELSE 'available' END,
       coalesce(i.settled_at, i.succeeded_at + interval '1 day'), i.id, i.succeeded_at
  FROM payment_intents i WHERE i.status = 'SUCCEEDED';
INSERT INTO balance_transactions (id, product_id, livemode, type, amount, fee, net, status, available_on, source, created_at)
SELECT 'txn_' || substr(r.id, 4), r.product_id, r.livemode, 'refund', -r.amount, 0, -r.amount, 'available', t.created_at, r.id, t.created_at
  FROM refunds r JOIN ledger_transactions t ON t.reference_id = r.id AND t.reason = 'refund_succeeded'
 WHERE r.status = 'SUCCEEDED';
