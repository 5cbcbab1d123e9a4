-- The expiry queues' indexes, narrowed to what only the expiry workers state (as 006 did for the other queues). A
-- lookup of an order or a session by its key states its status too (`WHERE id = $1 AND status = 'PENDING'`), so with
-- `WHERE status = 'PENDING'` alone the planner could serve it by scanning every open order once its statistics were
-- taken with none open. An open order's `paid_at` is always NULL (CHECK on orders), and only card-binding sessions
-- expire on their own (an order's session closes with its order), so the workers select exactly the rows they did.
DROP INDEX orders_pending_expiry;
CREATE INDEX orders_pending_expiry ON orders (expires_at) WHERE status = 'PENDING' AND paid_at IS NULL;
DROP INDEX checkout_sessions_open_expiry;
CREATE INDEX checkout_sessions_open_expiry ON checkout_sessions (expires_at)
  WHERE kind = 'card_binding' AND status IN ('PENDING', 'AWAITING_CODE');
