// The ends of holds: one capture or release under way or done per hold, each a rail operation of its own.
import type { Queryable, Transaction } from '../../db/types.js';
import type { OperationsPage, RecordedMoney } from '../payments/service.js';
import type { ReceiptLines } from '../receipts/schema.js';

const END_COLUMNS = 'id, product_id, livemode, payment_intent_id, kind, reason, amount, fee, receipt_lines, status, failure_code, reconcile_count, created_at';

export type HoldEndKind = 'capture' | 'release';

export interface HoldEndRow {
  id: string;
  product_id: string;
  livemode: boolean;
  payment_intent_id: string;
  kind: HoldEndKind;
  reason: 'requested' | 'expired';
  amount: number;
  fee: number | null;
  receipt_lines: ReceiptLines | null;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED';
  failure_code: string | null;
  reconcile_count: number;
  created_at: Date;
}

export type NewHoldEnd = Pick<HoldEndRow, 'id' | 'product_id' | 'livemode' | 'payment_intent_id' | 'kind' | 'reason' | 'amount' | 'fee' | 'receipt_lines'>;

/** A PENDING end, which reconciliation may look at once its call window has passed. */
export async function insertHoldEnd(tx: Transaction, end: NewHoldEnd, inFlightMs: number): Promise<HoldEndRow> {
  const [row] = await tx.query<HoldEndRow>(
    `INSERT INTO hold_ends (id, product_id, livemode, payment_intent_id, kind, reason, amount, fee, receipt_lines, status, reconcile_after)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, 'PENDING', now() + $10 * interval '1 millisecond') RETURNING ${END_COLUMNS}`,
    [end.id, end.product_id, end.livemode, end.payment_intent_id, end.kind, end.reason, end.amount, end.fee, end.receipt_lines === null ? null : JSON.stringify(end.receipt_lines), inFlightMs],
  );
  return row!;
}

export async function holdEndById(db: Queryable, id: string): Promise<HoldEndRow> {
  const [row] = await db.query<HoldEndRow>(`SELECT ${END_COLUMNS} FROM hold_ends WHERE id = $1`, [id]);
  if (!row) throw new Error(`hold end ${id} vanished`);
  return row;
}

/** What the rail call needs: the end, and its hold's card token. */
export async function holdEndCallOf(db: Queryable, id: string): Promise<HoldEndRow & { rail_token: string }> {
  const [row] = await db.query<HoldEndRow & { rail_token: string }>(
    `SELECT ${END_COLUMNS.split(', ').map((column) => `e.${column}`).join(', ')}, i.rail_token
       FROM hold_ends e JOIN payment_intents i ON i.id = e.payment_intent_id WHERE e.id = $1`,
    [id],
  );
  if (!row) throw new Error(`hold end ${id} vanished`);
  return row;
}

/** PENDING → SUCCEEDED or FAILED, once: the row only to the caller that made the change. */
export async function finishHoldEnd(tx: Transaction, id: string, outcome: { status: 'SUCCEEDED' } | { status: 'FAILED'; failureCode: string }): Promise<HoldEndRow | undefined> {
  const [row] = await tx.query<HoldEndRow>(
    `UPDATE hold_ends SET status = $2, failure_code = $3, reconcile_after = NULL WHERE id = $1 AND status = 'PENDING' RETURNING ${END_COLUMNS}`,
    [id, outcome.status, outcome.status === 'FAILED' ? outcome.failureCode : null],
  );
  return row;
}

export function deferHoldEnd(tx: Transaction, id: string, delayMs: number): void {
  tx.write(`UPDATE hold_ends SET reconcile_after = now() + $2 * interval '1 millisecond' WHERE id = $1 AND status = 'PENDING'`, [id, delayMs]);
}

/** Leases a bounded batch of PENDING ends due for reconciliation (see leaseDebitsToReconcile). */
export function leaseHoldEndsToReconcile(db: Queryable, batchMax: number, leaseMs: number): Promise<HoldEndRow[]> {
  return db.query<HoldEndRow>(
    `UPDATE hold_ends SET reconcile_after = now() + $2 * interval '1 millisecond', reconcile_count = reconcile_count + 1
      WHERE id IN (
        SELECT id FROM hold_ends WHERE status = 'PENDING' AND reconcile_after <= now()
         ORDER BY reconcile_after LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING ${END_COLUMNS}`,
    [batchMax, leaseMs],
  );
}

/** A page of the captures and releases made in [from, to), by id in byte order, as reconciliation compares them. */
export function holdEndOperationsBetween(db: Queryable, page: OperationsPage): Promise<RecordedMoney[]> {
  return db.query<RecordedMoney>(
    `SELECT id AS operation_id, kind AS type, amount, status, created_at FROM hold_ends
      WHERE livemode = $1 AND created_at >= $2 AND created_at < $3 AND ($4::text IS NULL OR id > $4 COLLATE "C")
      ORDER BY id COLLATE "C" LIMIT $5`,
    [page.livemode, page.from, page.to, page.after, page.limit],
  );
}
