import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';
import type { OperationsPage, RecordedMoney } from '../payments/service.js';
import { REFUND_STATES } from './state.js';
import type { RefundStatus } from './schema.js';

const REFUND_COLUMNS = 'id, product_id, livemode, payment_intent_id, amount, currency, status, failure_code, reason, receipt_id, reconcile_count, created_at';
/** What a merchant's list of them reads. */
export const REFUND_LIST: Listed = { table: 'refunds', columns: REFUND_COLUMNS };

export interface RefundRow {
  id: string;
  product_id: string;
  livemode: boolean;
  payment_intent_id: string;
  amount: number;
  currency: 'UZS';
  status: RefundStatus;
  failure_code: string | null;
  reason: string | null;
  receipt_id: string | null;
  reconcile_count: number;
  created_at: Date;
}

export async function insertRefund(
  tx: Transaction,
  merchant: Merchant,
  refund: { id: string; paymentIntentId: string; amount: number; reason: string | null; inFlightMs: number },
): Promise<RefundRow> {
  const [row] = await tx.query<RefundRow>(
    `INSERT INTO refunds (id, product_id, livemode, payment_intent_id, amount, currency, status, reason, reconcile_after)
     VALUES ($1, $2, $3, $4, $5, 'UZS', 'PENDING', $6, now() + $7 * interval '1 millisecond') RETURNING ${REFUND_COLUMNS}`,
    [refund.id, merchant.productId, merchant.livemode, refund.paymentIntentId, refund.amount, refund.reason, refund.inFlightMs],
  );
  return row!;
}

export async function findRefund(db: Queryable, merchant: Merchant, id: string): Promise<RefundRow | undefined> {
  const [row] = await db.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM refunds WHERE id = $1 AND product_id = $2 AND livemode = $3`, [
    id,
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}

export async function refundById(db: Queryable, id: string): Promise<RefundRow> {
  const [row] = await db.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM refunds WHERE id = $1`, [id]);
  if (!row) throw new Error(`refund ${id} vanished`);
  return row;
}

export async function activeRefundOf(tx: Transaction, paymentIntentId: string): Promise<RefundRow | undefined> {
  const [row] = await tx.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM refunds WHERE payment_intent_id = $1 AND status <> 'FAILED'`, [paymentIntentId]);
  return row;
}

/**
 * What a refund needs at the rail: the card's token, and the operation that took the money: the payment's debit, or
 * the capture of its hold.
 */
export async function refundCallOf(db: Queryable, id: string) {
  const [row] = await db.query<{ amount: number; debit_operation_id: string; rail_token: string; livemode: boolean }>(
    `SELECT r.amount, coalesce(c.id, r.payment_intent_id) AS debit_operation_id, i.rail_token, r.livemode
       FROM refunds r JOIN payment_intents i ON i.id = r.payment_intent_id
       LEFT JOIN hold_ends c ON c.payment_intent_id = i.id AND c.kind = 'capture' AND c.status = 'SUCCEEDED'
      WHERE r.id = $1`,
    [id],
  );
  if (!row) throw new Error(`refund ${id} vanished`);
  return row;
}

/** PENDING → SUCCEEDED or FAILED, once: returns the row only to the caller that made the change. */
export async function finishRefund(
  tx: Transaction,
  id: string,
  outcome: { status: 'SUCCEEDED' } | { status: 'FAILED'; failureCode: string },
): Promise<RefundRow | undefined> {
  const { from, to } = REFUND_STATES.move(outcome.status === 'SUCCEEDED' ? 'refund_succeeded' : 'refund_failed');
  const [row] = await tx.query<RefundRow>(
    `UPDATE refunds SET status = $2, failure_code = $3, reconcile_after = NULL WHERE id = $1 AND status = ANY($4::text[]) RETURNING ${REFUND_COLUMNS}`,
    [id, to, outcome.status === 'FAILED' ? outcome.failureCode : null, from],
  );
  return row;
}

export async function attachReceipt(tx: Transaction, id: string, receiptId: string): Promise<RefundRow> {
  const [row] = await tx.query<RefundRow>(`UPDATE refunds SET receipt_id = $2 WHERE id = $1 RETURNING ${REFUND_COLUMNS}`, [id, receiptId]);
  return row!;
}

export function deferRefund(tx: Transaction, id: string, delayMs: number): void {
  tx.write(`UPDATE refunds SET reconcile_after = now() + $2 * interval '1 millisecond' WHERE id = $1 AND status = 'PENDING'`, [
    id,
    delayMs,
  ]);
}

/** Leases a bounded batch of PENDING refunds due for reconciliation (see leaseDebitsToReconcile). */
export async function leaseRefundsToReconcile(db: Queryable, batchMax: number, leaseMs: number): Promise<RefundRow[]> {
  return db.query<RefundRow>(
    `UPDATE refunds SET reconcile_after = now() + $2 * interval '1 millisecond', reconcile_count = reconcile_count + 1
      WHERE id IN (
        SELECT id FROM refunds WHERE status = 'PENDING' AND reconcile_after <= now()
         ORDER BY reconcile_after LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING ${REFUND_COLUMNS}`,
    [batchMax, leaseMs],
  );
}

/** A page of the refunds created in [from, to), by id in byte order, as reconciliation compares them with the bank's record. */
export function refundOperationsBetween(db: Queryable, page: OperationsPage): Promise<RecordedMoney[]> {
  return db.query<RecordedMoney>(
    `SELECT id AS operation_id, 'refund' AS type, amount, status, created_at FROM refunds
      WHERE livemode = $1 AND created_at >= $2 AND created_at < $3 AND ($4::text IS NULL OR id > $4 COLLATE "C")
      ORDER BY id COLLATE "C" LIMIT $5`,
    [page.livemode, page.from, page.to, page.after, page.limit],
  );
}

/** The payment each of the merchant's refunds gave back, by refund id. */
export async function paymentsOfRefunds(db: Queryable, merchant: Merchant, ids: string[]): Promise<Map<string, string>> {
  const rows = await db.query<{ id: string; payment_intent_id: string }>(
    'SELECT id, payment_intent_id FROM refunds WHERE id = ANY($1::text[]) AND product_id = $2 AND livemode = $3',
    [ids, merchant.productId, merchant.livemode],
  );
  return new Map(rows.map((row) => [row.id, row.payment_intent_id]));
}
