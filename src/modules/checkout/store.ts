import type { Queryable } from '../../db/db.js';
import type { SessionStatus } from './state.js';

export interface SessionRow {
  token: string;
  kind: 'order' | 'card_binding';
  product_id: string;
  livemode: boolean;
  order_id: string | null;
  binding_id: string | null;
  status: SessionStatus;
  expires_at: Date;
  card_attempts: number;
  code_attempts: number;
  code_sends: number;
  code_sent_at: Date | null;
  rail_token: string | null;
  network: 'uzcard' | 'humo' | null;
  masked_pan: string | null;
  card_expiry: string | null;
  completed_at: Date | null;
  save_card: boolean;
  /** TOO_MANY_ATTEMPTS once the buyer used up the card or code attempts (the session is then FAILED). */
  failure_code: string | null;
  // Joined from the product and the session's subject (a binding or an order):
  product_name: string;
  fee_bps: number;
  return_url: string | null;
  customer_ref: string | null;
  order_amount: number | null;
  order_description: string | null;
  order_status: string | null;
  /** Computed by the database clock, the one clock every process shares. */
  expired: boolean;
}

const SELECT_SESSION = `
  SELECT s.*, p.name AS product_name, p.fee_bps,
         coalesce(b.return_url, o.return_url) AS return_url, coalesce(b.customer_ref, o.customer_ref) AS customer_ref,
         o.amount AS order_amount, o.description AS order_description, o.status AS order_status,
         s.expires_at <= now() AS expired
    FROM checkout_sessions s
    JOIN products p ON p.id = s.product_id
    LEFT JOIN card_bindings b ON b.id = s.binding_id
    LEFT JOIN orders o ON o.id = s.order_id
   WHERE s.token = $1`;

/** The session of a public token: a card binding's or an order's. */
export async function findSession(db: Queryable, token: string, lock: boolean): Promise<SessionRow | undefined> {
  const [row] = await db.query<SessionRow>(lock ? `${SELECT_SESSION} FOR UPDATE OF s` : SELECT_SESSION, [token]);
  return row;
}

/** Marks a session EXPIRED if it is still open and past its time; otherwise leaves it as it is. */
export async function expireSession(db: Queryable, token: string): Promise<void> {
  await db.query(
    `UPDATE checkout_sessions SET status = 'EXPIRED'
      WHERE token = $1 AND status IN ('PENDING', 'AWAITING_CODE') AND expires_at <= now()`,
    [token],
  );
}

export async function countCardAttempt(tx: Queryable, token: string): Promise<void> {
  await tx.query('UPDATE checkout_sessions SET card_attempts = card_attempts + 1 WHERE token = $1', [token]);
}

export async function countCodeAttempt(tx: Queryable, token: string): Promise<void> {
  await tx.query('UPDATE checkout_sessions SET code_attempts = code_attempts + 1 WHERE token = $1', [token]);
}

export async function countCodeSend(tx: Queryable, token: string): Promise<void> {
  await tx.query('UPDATE checkout_sessions SET code_sends = code_sends + 1, code_sent_at = now() WHERE token = $1', [token]);
}

export interface AcceptedCard {
  railToken: string;
  network: 'uzcard' | 'humo';
  maskedPan: string;
  expiry: string;
  saveCard: boolean;
}

/** PENDING → AWAITING_CODE with the tokenized card, unless another submission or expiry got there first. */
export async function acceptCard(db: Queryable, token: string, card: AcceptedCard): Promise<boolean> {
  const rows = await db.query(
    `UPDATE checkout_sessions
        SET status = 'AWAITING_CODE', rail_token = $2, network = $3, masked_pan = $4, card_expiry = $5, save_card = $6,
            code_sends = code_sends + 1, code_sent_at = now()
      WHERE token = $1 AND status = 'PENDING' AND expires_at > now()
      RETURNING token`,
    [token, card.railToken, card.network, card.maskedPan, card.expiry, card.saveCard],
  );
  return rows.length === 1;
}

/** A card binding's session: AWAITING_CODE → COMPLETED, unless a concurrent submission or expiry got there first. */
export async function completeSession(tx: Queryable, token: string): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE checkout_sessions SET status = 'COMPLETED', completed_at = now(), rail_token = NULL
      WHERE token = $1 AND status = 'AWAITING_CODE' AND expires_at > now()
      RETURNING token`,
    [token],
  );
  return rows.length === 1;
}

/** Expires a bounded batch of card-binding sessions past their time (orders expire with their sessions). */
export async function expireDueSessions(db: Queryable, batchMax: number): Promise<number> {
  const rows = await db.query(
    `UPDATE checkout_sessions SET status = 'EXPIRED'
      WHERE token IN (
        SELECT token FROM checkout_sessions
         WHERE kind = 'card_binding' AND status IN ('PENDING', 'AWAITING_CODE') AND expires_at <= now()
         ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING token`,
    [batchMax],
  );
  return rows.length;
}

/** Closes an order's session when its order reaches a final status; an order paid late completes its expired session. */
export async function closeOrderSession(tx: Queryable, orderId: string, status: 'COMPLETED' | 'FAILED' | 'EXPIRED'): Promise<void> {
  await tx.query(
    `UPDATE checkout_sessions
        SET status = $2, completed_at = CASE WHEN $2 = 'COMPLETED' THEN now() END, rail_token = NULL
      WHERE order_id = $1 AND (status NOT IN ('COMPLETED', 'FAILED', 'EXPIRED') OR ($2 = 'COMPLETED' AND status = 'EXPIRED'))`,
    [orderId, status],
  );
}

export interface CapturedCard {
  save_card: boolean;
  network: 'uzcard' | 'humo';
  masked_pan: string;
  card_expiry: string;
}

export async function capturedCardOfOrder(tx: Queryable, orderId: string): Promise<CapturedCard> {
  const [row] = await tx.query<CapturedCard>('SELECT save_card, network, masked_pan, card_expiry FROM checkout_sessions WHERE order_id = $1', [
    orderId,
  ]);
  if (!row) throw new Error(`order ${orderId} has no session`);
  return row;
}

/** PENDING or AWAITING_CODE → FAILED with TOO_MANY_ATTEMPTS, once; false if the session had moved on. */
export async function lockOutSession(tx: Queryable, token: string): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE checkout_sessions SET status = 'FAILED', failure_code = 'TOO_MANY_ATTEMPTS', rail_token = NULL
      WHERE token = $1 AND status IN ('PENDING', 'AWAITING_CODE') RETURNING token`,
    [token],
  );
  return rows.length === 1;
}

/** AWAITING_CODE → PROCESSING: the order's debit starts, unless a concurrent call, a cancel or expiry got there first. */
export async function startOrderDebit(tx: Queryable, token: string): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE checkout_sessions SET status = 'PROCESSING' WHERE token = $1 AND status = 'AWAITING_CODE' AND expires_at > now() RETURNING token`,
    [token],
  );
  return rows.length === 1;
}
