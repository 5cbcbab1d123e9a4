import type { Queryable, Transaction } from '../../db/types.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';
import { qualified } from '../../core/sql.js';
import type { ReceiptLines, ReceiptStatus, ReceiptType } from './schema.js';
import { RECEIPT_STATES } from './state.js';

const RECEIPT_COLUMNS =
  'id, product_id, livemode, type, status, payment_intent_id, refund_id, lines, amount, vat_amount, masked_pan, public_token, terminal_id, receipt_number, fiscal_sign, fiscalized_at, failure_code, attempts, created_at';
/** What a merchant's list of them reads. */
export const RECEIPT_LIST: Listed = { table: 'receipts', columns: RECEIPT_COLUMNS };

export interface ReceiptRow {
  id: string;
  product_id: string;
  livemode: boolean;
  type: ReceiptType;
  status: ReceiptStatus;
  payment_intent_id: string;
  refund_id: string | null;
  lines: ReceiptLines;
  amount: number;
  vat_amount: number;
  /** The card that paid, as a receipt may show it. */
  masked_pan: string;
  public_token: string;
  terminal_id: string | null;
  receipt_number: string | null;
  fiscal_sign: string | null;
  fiscalized_at: Date | null;
  failure_code: string | null;
  attempts: number;
  created_at: Date;
}

export interface NewReceipt {
  id: string;
  publicToken: string;
  /** Seconds before the first attempt: the first delay of the retry schedule. */
  firstAttemptInSeconds: number;
}

/** A payment's PENDING sale receipt, with the lines and card it was paid with. */
export function insertSale(
  tx: Transaction,
  receipt: NewReceipt & { vatAmount: number },
  payment: { id: string; product_id: string; livemode: boolean; amount: number; masked_pan: string; receipt_lines: ReceiptLines },
): void {
  tx.write(
    `INSERT INTO receipts (id, product_id, livemode, type, status, payment_intent_id, lines, amount, vat_amount, masked_pan, public_token, next_attempt_at)
     VALUES ($1, $2, $3, 'sale', 'PENDING', $4, $5, $6, $7, $8, $9, now() + $10 * interval '1 second')`,
    [receipt.id, payment.product_id, payment.livemode, payment.id, JSON.stringify(payment.receipt_lines), payment.amount, receipt.vatAmount, payment.masked_pan, receipt.publicToken, receipt.firstAttemptInSeconds],
  );
}

/** A refund's PENDING return receipt, with its payment's sale lines; false when the payment had no sale receipt. */
export async function insertReturn(tx: Transaction, receipt: NewReceipt, refund: { id: string; payment_intent_id: string; amount: number }): Promise<boolean> {
  const inserted = await tx.query(
    `INSERT INTO receipts (id, product_id, livemode, type, status, payment_intent_id, refund_id, lines, amount, vat_amount, masked_pan, public_token, next_attempt_at)
     SELECT $1, s.product_id, s.livemode, 'return', 'PENDING', s.payment_intent_id, $2, s.lines, $3, s.vat_amount, s.masked_pan, $4, now() + $5 * interval '1 second'
       FROM receipts s WHERE s.payment_intent_id = $6 AND s.type = 'sale'
     RETURNING 1`,
    [receipt.id, refund.id, refund.amount, receipt.publicToken, receipt.firstAttemptInSeconds, refund.payment_intent_id],
  );
  return inserted.length === 1;
}

export async function findReceipt(db: Queryable, merchant: Merchant, id: string): Promise<ReceiptRow | undefined> {
  const [row] = await db.query<ReceiptRow>(`SELECT ${RECEIPT_COLUMNS} FROM receipts WHERE id = $1 AND product_id = $2 AND livemode = $3`, [
    id,
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}

/** A receipt with the shop as its buyer sees it (the product's display name, else its name) and its branding. */
export interface ReceiptWithShop extends ReceiptRow {
  shop_name: string;
  brand_color: string | null;
  logo_digest: string | null;
}

/** The receipt a buyer's link opens, with its shop: what the printable page shows. */
export async function receiptWithShop(db: Queryable, token: string): Promise<ReceiptWithShop | undefined> {
  const [row] = await db.query<ReceiptWithShop>(
    `SELECT ${qualified(RECEIPT_COLUMNS, 'r')}, coalesce(p.display_name, p.name) AS shop_name, p.brand_color, p.logo_digest
       FROM receipts r JOIN products p ON p.id = r.product_id WHERE r.public_token = $1`,
    [token],
  );
  return row;
}

/** A payment's receipts, its sale first. */
export function receiptsOfPayment(db: Queryable, paymentIntentId: string): Promise<ReceiptRow[]> {
  return db.query<ReceiptRow>(`SELECT ${RECEIPT_COLUMNS} FROM receipts WHERE payment_intent_id = $1 ORDER BY seq`, [paymentIntentId]);
}

/** A receipt leased for an attempt, with its sale's status when it is a return. */
export interface LeasedReceipt extends ReceiptRow {
  sale_status: ReceiptStatus | null;
}

/**
 * Leases a bounded batch of PENDING receipts whose attempt is due, counting the attempt: a process that dies during
 * its call leaves the receipt to whoever takes it once the lease of its mode has passed. A return is not due while its sale is
 * PENDING: the tax authority must know a sale before its return.
 */
export function leaseDue(db: Queryable, batchMax: number, leaseMs: { test: number; live: number }): Promise<LeasedReceipt[]> {
  return db.query<LeasedReceipt>(
    `UPDATE receipts r SET next_attempt_at = now() + CASE WHEN r.livemode THEN $3::integer ELSE $2::integer END * interval '1 millisecond', attempts = attempts + 1
      WHERE r.id IN (
        SELECT d.id FROM receipts d WHERE d.status = 'PENDING' AND d.next_attempt_at <= now()
           AND (d.type = 'sale' OR NOT EXISTS (
                SELECT 1 FROM receipts s WHERE s.payment_intent_id = d.payment_intent_id AND s.type = 'sale' AND s.status = 'PENDING'))
         ORDER BY d.next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING ${qualified(RECEIPT_COLUMNS, 'r')},
        (SELECT s.status FROM receipts s WHERE s.payment_intent_id = r.payment_intent_id AND s.type = 'sale' AND r.type = 'return') AS sale_status`,
    [batchMax, leaseMs.test, leaseMs.live],
  );
}

/** PENDING → FISCALIZED with what the module signed, once: returns the row only to the caller that made the change. */
export async function markFiscalized(
  tx: Transaction,
  id: string,
  signed: { terminalId: string; receiptNumber: string; fiscalSign: string; registeredAt: Date },
): Promise<ReceiptRow | undefined> {
  const { from, to } = RECEIPT_STATES.move('registered');
  const [row] = await tx.query<ReceiptRow>(
    `UPDATE receipts SET status = $2, terminal_id = $3, receipt_number = $4, fiscal_sign = $5, fiscalized_at = $6, next_attempt_at = NULL
      WHERE id = $1 AND status = ANY($7::text[]) RETURNING ${RECEIPT_COLUMNS}`,
    [id, to, signed.terminalId, signed.receiptNumber, signed.fiscalSign, signed.registeredAt, from],
  );
  return row;
}

/** PENDING → FAILED with why, once. */
export async function markFailed(tx: Transaction, id: string, failureCode: string): Promise<ReceiptRow | undefined> {
  const { from, to } = RECEIPT_STATES.move('refused');
  const [row] = await tx.query<ReceiptRow>(
    `UPDATE receipts SET status = $2, failure_code = $3, next_attempt_at = NULL WHERE id = $1 AND status = ANY($4::text[]) RETURNING ${RECEIPT_COLUMNS}`,
    [id, to, failureCode, from],
  );
  return row;
}

/** The next attempt of a PENDING receipt, after an unclear answer. */
export function deferAttempt(tx: Transaction, id: string, delaySeconds: number): void {
  tx.write(`UPDATE receipts SET next_attempt_at = now() + $2 * interval '1 second' WHERE id = $1 AND status = 'PENDING'`, [id, delaySeconds]);
}

/** The receipts fiscalized in [from, to) in one mode, oldest first: what reconciliation compares with the module's. */
export function fiscalizedBetween(db: Queryable, livemode: boolean, from: Date, to: Date, max: number): Promise<{ id: string; type: ReceiptType; amount: number }[]> {
  return db.query(
    `SELECT id, type, amount FROM receipts WHERE livemode = $1 AND status = 'FISCALIZED' AND fiscalized_at >= $2 AND fiscalized_at < $3
      ORDER BY fiscalized_at, id LIMIT $4`,
    [livemode, from, to, max],
  );
}
