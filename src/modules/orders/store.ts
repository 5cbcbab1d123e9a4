import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';
import type { CaptureMethod } from '../../core/schemas.js';
import type { ORDER_STATUSES } from './schema.js';
import { ORDER_STATES } from './state.js';
import type { ReceiptLines } from '../receipts/schema.js';

const ORDER_COLUMNS = 'id, product_id, livemode, amount, currency, status, description, customer_ref, return_url, checkout_token, save_card, payment_intent_id, saved_card_id, paid_at, failure_code, receipt_id, payment_link_id, capture_method, expires_at, created_at';
/**
 * An order (`order`: the SQL naming its id) whose debit is still running at the bank: it may yet be paid, so it does
 * not expire, and through a payment link it keeps its place.
 */
const debitRunning = (order: string) => `EXISTS (SELECT 1 FROM payment_intents WHERE order_id = ${order} AND status = 'PROCESSING')`;
/** What a merchant's list of them reads. */
export const ORDER_LIST: Listed = { table: 'orders', columns: ORDER_COLUMNS };

export interface OrderRow {
  id: string;
  product_id: string;
  livemode: boolean;
  amount: number;
  currency: 'UZS';
  status: (typeof ORDER_STATUSES)[number];
  description: string | null;
  customer_ref: string | null;
  return_url: string | null;
  checkout_token: string;
  save_card: boolean;
  payment_intent_id: string | null;
  saved_card_id: string | null;
  paid_at: Date | null;
  /** Why a FAILED order failed: its payment's refusal, or TOO_MANY_ATTEMPTS when the buyer used up the attempts. */
  failure_code: string | null;
  receipt_id: string | null;
  /** The payment link a buyer opened it through; null for an order made by the API. */
  payment_link_id: string | null;
  capture_method: CaptureMethod;
  expires_at: Date;
  created_at: Date;
}

/**
 * Inserts a PENDING order exactly as `row` says, so that its answer is known before it is written, with the fiscal
 * lines its payment's sale receipt gets (null when it needs none).
 */
export function insertOrder(tx: Transaction, row: OrderRow, receiptLines: ReceiptLines | null): void {
  tx.write(
    `INSERT INTO orders (id, product_id, livemode, amount, currency, status, description, customer_ref, return_url, checkout_token,
                         expires_at, created_at, receipt_lines, payment_link_id, capture_method)
     VALUES ($1, $2, $3, $4, 'UZS', 'PENDING', $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      row.id,
      row.product_id,
      row.livemode,
      row.amount,
      row.description,
      row.customer_ref,
      row.return_url,
      row.checkout_token,
      row.expires_at,
      row.created_at,
      receiptLines === null ? null : JSON.stringify(receiptLines),
      row.payment_link_id,
      row.capture_method,
    ],
  );
}

/**
 * How many orders of a payment link hold a place, counting up to `max`: PAID ones, and PENDING ones that can still be
 * paid (not past their time, or with a debit running, which is what keeps `markExpired` from expiring them).
 */
export async function placesHeld(tx: Transaction, paymentLinkId: string, max: number): Promise<number> {
  const [row] = await tx.query<{ held: number }>(
    `SELECT count(*)::int AS held FROM (
       SELECT 1 FROM orders o
        WHERE o.payment_link_id = $1
          AND (o.status = 'PAID'
               OR (o.status = 'PENDING'
                   AND (o.expires_at > now() OR ${debitRunning('o.id')})))
        LIMIT $2) held`,
    [paymentLinkId, max],
  );
  return row!.held;
}

export async function findOrder(db: Queryable, merchant: Merchant, id: string): Promise<OrderRow | undefined> {
  const [row] = await db.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 AND product_id = $2 AND livemode = $3`, [
    id,
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}

export async function lockOrder(tx: Transaction, merchant: Merchant, id: string): Promise<(OrderRow & { due: boolean }) | undefined> {
  const [row] = await tx.query<OrderRow & { due: boolean }>(
    `SELECT ${ORDER_COLUMNS}, expires_at <= now() AS due FROM orders WHERE id = $1 AND product_id = $2 AND livemode = $3 FOR UPDATE`,
    [id, merchant.productId, merchant.livemode],
  );
  return row;
}

/** Locks an order by id alone, for a session that already belongs to it. */
/** The order a payment is about to start on, locked, with the fiscal lines its payment carries; no other read has them. */
export async function lockOrderById(tx: Transaction, id: string): Promise<OrderRow & { receipt_lines: ReceiptLines | null }> {
  const [row] = await tx.query<OrderRow & { receipt_lines: ReceiptLines | null }>(`SELECT ${ORDER_COLUMNS}, receipt_lines FROM orders WHERE id = $1 FOR UPDATE`, [id]);
  if (!row) throw new Error(`order ${id} vanished`);
  return row;
}

export async function orderById(db: Queryable, id: string): Promise<OrderRow> {
  const [row] = await db.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`, [id]);
  if (!row) throw new Error(`order ${id} vanished`);
  return row;
}

export async function debitInProgress(tx: Transaction, orderId: string): Promise<boolean> {
  const [row] = await tx.query<{ running: boolean }>(`SELECT ${debitRunning('$1')} AS running`, [orderId]);
  return row!.running;
}

/** The sale receipt of an order paid by a hold, once the hold is captured. */
export function attachReceipt(tx: Transaction, id: string, receiptId: string): void {
  tx.write('UPDATE orders SET receipt_id = $2 WHERE id = $1', [id, receiptId]);
}

/** → PAID once, with its payment, its sale receipt and, when the buyer asked, the card it saved. */
export async function markPaid(
  tx: Transaction,
  id: string,
  payment: { id: string; receipt_id: string | null },
  savedCardId: string | null,
): Promise<OrderRow | undefined> {
  const { from, to } = ORDER_STATES.move('paid');
  const [row] = await tx.query<OrderRow>(
    `UPDATE orders SET status = $4, paid_at = now(), payment_intent_id = $2, saved_card_id = $3, save_card = $3::text IS NOT NULL, receipt_id = $6
      WHERE id = $1 AND status = ANY($5::text[]) RETURNING ${ORDER_COLUMNS}`,
    [id, payment.id, savedCardId, to, from, payment.receipt_id],
  );
  return row;
}

/** → FAILED once, with why, keeping the refused payment (none when the buyer used up the attempts). */
export async function markFailed(tx: Transaction, id: string, paymentIntentId: string | null, failureCode: string): Promise<OrderRow | undefined> {
  const { from, to } = ORDER_STATES.move('failed');
  const [row] = await tx.query<OrderRow>(
    `UPDATE orders SET status = $4, payment_intent_id = $2, failure_code = $3 WHERE id = $1 AND status = ANY($5::text[]) RETURNING ${ORDER_COLUMNS}`,
    [id, paymentIntentId, failureCode, to, from],
  );
  return row;
}

export async function markCanceled(tx: Transaction, id: string): Promise<OrderRow | undefined> {
  const { from, to } = ORDER_STATES.move('cancel');
  const [row] = await tx.query<OrderRow>(`UPDATE orders SET status = $2 WHERE id = $1 AND status = ANY($3::text[]) RETURNING ${ORDER_COLUMNS}`, [id, to, from]);
  return row;
}

/** Brings a PENDING order's end to now (test mode's "expire" helper); the expiry itself is `markExpired`'s. */
export function endNow(tx: Transaction, id: string): void {
  tx.write(`UPDATE orders SET expires_at = least(expires_at, now()) WHERE id = $1 AND status = 'PENDING'`, [id]);
}

/** → EXPIRED past its time, but never under a debit in progress. */
export async function markExpired(tx: Transaction, id: string): Promise<OrderRow | undefined> {
  const { from, to } = ORDER_STATES.move('expire');
  const [row] = await tx.query<OrderRow>(
    `UPDATE orders SET status = $2
      WHERE id = $1 AND status = ANY($3::text[]) AND expires_at <= now()
        AND NOT ${debitRunning('orders.id')}
      RETURNING ${ORDER_COLUMNS}`,
    [id, to, from],
  );
  return row;
}

/** Ids of PENDING orders past their time, locked for this transaction; others are skipped, not waited for. */
export async function lockDueForExpiry(tx: Transaction, batchMax: number): Promise<string[]> {
  const rows = await tx.query<{ id: string }>(
    // `paid_at IS NULL` always holds for a PENDING order; stating it is what lets this query use orders_pending_expiry.
    `SELECT id FROM orders WHERE status = 'PENDING' AND paid_at IS NULL AND expires_at <= now()
      ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [batchMax],
  );
  return rows.map((row) => row.id);
}
