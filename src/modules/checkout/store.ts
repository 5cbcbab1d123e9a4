import type { Queryable, Transaction } from '../../db/types.js';
import { qualified } from '../../core/sql.js';
import { moveOf, type SessionEvent, type SessionKind, type SessionStatus } from './state.js';

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
  /** The name buyers see: the product's display name, else its name. */
  product_name: string;
  brand_color: string | null;
  logo_digest: string | null;
  fee_bps: number;
  return_url: string | null;
  customer_ref: string | null;
  order_amount: number | null;
  order_description: string | null;
  order_status: string | null;
  /** The order's payment once it was made (a refused one included), and when the order was paid. */
  order_payment: string | null;
  order_paid_at: Date | null;
  /** Why the order failed: the bank's reason when it refused the payment. */
  order_failure_code: string | null;
  /** Computed by the database clock, the one clock every process shares. */
  expired: boolean;
  /** The operator suspended the product: the session cannot be paid or used to save a card. */
  product_suspended: boolean;
}

/** A PENDING session for a new order or binding: it shares its subject's token and expiry. */
export async function openSession(
  tx: Transaction,
  kind: SessionKind,
  subject: { id: string; checkout_token: string; product_id: string; livemode: boolean; expires_at: Date },
): Promise<{ status: SessionStatus; failure_code: string | null }> {
  const column = kind === 'order' ? 'order_id' : 'binding_id';
  const [row] = await tx.query<{ status: SessionStatus; failure_code: string | null }>(
    `INSERT INTO checkout_sessions (token, kind, product_id, livemode, ${column}, status, expires_at)
     VALUES ($1, $2, $3, $4, $5, 'PENDING', $6) RETURNING status, failure_code`,
    [subject.checkout_token, kind, subject.product_id, subject.livemode, subject.id, subject.expires_at],
  );
  return row!;
}

const SESSION_COLUMNS =
  'token, kind, product_id, livemode, order_id, binding_id, status, expires_at, card_attempts, code_attempts, code_sends, code_sent_at, ' +
  'rail_token, network, masked_pan, card_expiry, completed_at, save_card, failure_code';

const SELECT_SESSION = `
  SELECT ${qualified(SESSION_COLUMNS, 's')}, coalesce(p.display_name, p.name) AS product_name, p.fee_bps, p.brand_color, p.logo_digest,
         coalesce(b.return_url, o.return_url) AS return_url, coalesce(b.customer_ref, o.customer_ref) AS customer_ref,
         o.amount AS order_amount, o.description AS order_description, o.status AS order_status,
         o.payment_intent_id AS order_payment, o.paid_at AS order_paid_at, o.failure_code AS order_failure_code,
         s.expires_at <= now() AS expired, p.suspended_at IS NOT NULL AS product_suspended
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

/** Which sessions a move applies to, besides their status: one by token or an order's, and their time. */
interface Target {
  column: 'token' | 'order_id';
  value: string;
  /** Whether the session must still be open (`open`) or past its time (`past`); `any` ignores the time. */
  time: 'open' | 'past' | 'any';
}

const TIME_CONDITIONS = { open: ' AND expires_at > now()', past: ' AND expires_at <= now()', any: '' } as const;

/**
 * Moves the targeted session along the state table's row for `on`, writing `set` (assignments whose parameters
 * follow the move's own four) with the status, unless it is no longer at one of the row's `from` statuses — a
 * concurrent call, a cancel or expiry got there first. Says whether it moved.
 */
async function move(db: Queryable, kind: SessionKind, on: SessionEvent, target: Target, set = '', params: unknown[] = []): Promise<boolean> {
  const { from, to } = moveOf(kind, on);
  const rows = await db.query(
    `UPDATE checkout_sessions SET status = $2${set ? `, ${set}` : ''}
      WHERE ${target.column} = $1 AND kind = $3 AND status = ANY($4::text[])${TIME_CONDITIONS[target.time]}
      RETURNING token`,
    [target.value, to, kind, from, ...params],
  );
  return rows.length === 1;
}

/** Marks a session EXPIRED if it is still open and past its time; otherwise leaves it as it is. */
export async function expireSession(db: Queryable, kind: SessionKind, token: string): Promise<void> {
  await move(db, kind, 'expire', { column: 'token', value: token, time: 'past' });
}

export async function countCardAttempt(tx: Transaction, token: string): Promise<void> {
  await tx.query('UPDATE checkout_sessions SET card_attempts = card_attempts + 1 WHERE token = $1', [token]);
}

export async function countCodeAttempt(tx: Transaction, token: string): Promise<void> {
  await tx.query('UPDATE checkout_sessions SET code_attempts = code_attempts + 1 WHERE token = $1', [token]);
}

export async function countCodeSend(tx: Transaction, token: string): Promise<void> {
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
export async function acceptCard(db: Queryable, kind: SessionKind, token: string, card: AcceptedCard): Promise<boolean> {
  return move(
    db,
    kind,
    'submit_card',
    { column: 'token', value: token, time: 'open' },
    'rail_token = $5, network = $6, masked_pan = $7, card_expiry = $8, save_card = $9, code_sends = code_sends + 1, code_sent_at = now()',
    [card.railToken, card.network, card.maskedPan, card.expiry, card.saveCard],
  );
}

/** A card binding's session: AWAITING_CODE → COMPLETED, unless a concurrent submission or expiry got there first. */
export async function completeBindingSession(tx: Transaction, token: string): Promise<boolean> {
  return move(tx, 'card_binding', 'submit_code', { column: 'token', value: token, time: 'open' }, 'completed_at = now(), rail_token = NULL');
}

/** Expires a bounded batch of card-binding sessions past their time (orders expire with their sessions). */
export async function expireDueSessions(db: Queryable, batchMax: number): Promise<number> {
  const { from, to } = moveOf('card_binding', 'expire');
  const rows = await db.query(
    `UPDATE checkout_sessions SET status = $3
      WHERE token IN (
        SELECT token FROM checkout_sessions
         WHERE kind = 'card_binding' AND status = ANY($2::text[]) AND expires_at <= now()
         ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING token`,
    [batchMax, from, to],
  );
  return rows.length;
}

/** Closes an order's session when its order reaches a final status (paid, failed, or expired or canceled). */
export async function closeOrderSession(tx: Transaction, orderId: string, on: 'debit_succeeded' | 'debit_failed' | 'order_closed'): Promise<void> {
  const set = on === 'debit_succeeded' ? 'completed_at = now(), rail_token = NULL' : 'rail_token = NULL';
  await move(tx, 'order', on, { column: 'order_id', value: orderId, time: 'any' }, set);
}

export interface CapturedCard {
  save_card: boolean;
  network: 'uzcard' | 'humo';
  masked_pan: string;
  card_expiry: string;
}

export async function capturedCardOfOrder(tx: Transaction, orderId: string): Promise<CapturedCard> {
  const [row] = await tx.query<CapturedCard>('SELECT save_card, network, masked_pan, card_expiry FROM checkout_sessions WHERE order_id = $1', [
    orderId,
  ]);
  if (!row) throw new Error(`order ${orderId} has no session`);
  return row;
}

/** PENDING or AWAITING_CODE → FAILED with TOO_MANY_ATTEMPTS, once; false if the session had moved on. */
export async function lockOutSession(tx: Transaction, kind: SessionKind, token: string): Promise<boolean> {
  return move(tx, kind, 'attempts_used_up', { column: 'token', value: token, time: 'any' }, "failure_code = 'TOO_MANY_ATTEMPTS', rail_token = NULL");
}

/** AWAITING_CODE → PROCESSING: the order's debit starts, unless a concurrent call, a cancel or expiry got there first. */
export async function startOrderDebit(tx: Transaction, token: string): Promise<boolean> {
  return move(tx, 'order', 'submit_code', { column: 'token', value: token, time: 'open' });
}
