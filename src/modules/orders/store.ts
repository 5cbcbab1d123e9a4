import type { Queryable, Transaction } from '../../db/types.js';
import { Statement, type Items } from '../../core/statement.js';
import type { Merchant } from '../../core/merchant.js';
import type { Listed } from '../../core/pagination.js';
import { addOpenSessions } from '../checkout-sessions/store.js';
import type { ORDER_STATUSES } from './schema.js';

const ORDER_COLUMNS = 'id, product_id, livemode, amount, currency, status, description, customer_ref, return_url, checkout_token, save_card, payment_intent_id, saved_card_id, paid_at, failure_code, expires_at, created_at';
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
  expires_at: Date;
  created_at: Date;
}

/**
 * Inserts a PENDING order and its checkout session (same token, same expiry) in one statement, exactly as `row` says,
 * so that its answer can be made before it is written. With `also`, it writes only if the expression `also` returns has
 * a row (the idempotency key's claim joined to the order, item 1 of the statement); it says whether it wrote.
 */
export async function insertOrder(
  db: Queryable,
  row: OrderRow,
  also: (st: Statement, guard: Items) => Items = (_st, guard) => guard,
): Promise<boolean> {
  const st = new Statement();
  const guard = also(st, st.items('order_new', 'SELECT 1 AS i'));
  const order = st.with(
    'o',
    `INSERT INTO orders (id, product_id, livemode, amount, currency, status, description, customer_ref, return_url, checkout_token,
                         expires_at, created_at)
     SELECT ${st.param(row.id)}, ${st.param(row.product_id)}, ${st.param(row.livemode, 'boolean')}, ${st.param(row.amount, 'bigint')}, 'UZS',
            'PENDING', ${st.param(row.description)}, ${st.param(row.customer_ref)}, ${st.param(row.return_url)}, ${st.param(row.checkout_token)},
            ${st.param(row.expires_at, 'timestamptz')}, ${st.param(row.created_at, 'timestamptz')}
       FROM ${guard}
     RETURNING id, checkout_token, product_id, livemode, expires_at`,
  );
  addOpenSessions(st, 'order', order);
  return (await st.run(db, `SELECT id FROM ${order}`)).length === 1;
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
export async function lockOrderById(tx: Transaction, id: string): Promise<OrderRow> {
  const [row] = await tx.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1 FOR UPDATE`, [id]);
  if (!row) throw new Error(`order ${id} vanished`);
  return row;
}

export async function orderById(db: Queryable, id: string): Promise<OrderRow> {
  const [row] = await db.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`, [id]);
  if (!row) throw new Error(`order ${id} vanished`);
  return row;
}

export async function debitInProgress(tx: Transaction, orderId: string): Promise<boolean> {
  const rows = await tx.query(`SELECT 1 FROM payment_intents WHERE order_id = $1 AND status = 'PROCESSING'`, [orderId]);
  return rows.length > 0;
}

/**
 * PENDING → PAID once, with its payment and, when the buyer asked, the card it saved. Also EXPIRED → PAID: the bank took
 * the money, so the order is paid, late, rather than the money lost to it (expiry and payment exclude each other; this
 * is the answer should they ever not).
 */
export async function markPaid(tx: Transaction, id: string, paymentIntentId: string, savedCardId: string | null): Promise<OrderRow | undefined> {
  const [row] = await tx.query<OrderRow>(
    `UPDATE orders SET status = 'PAID', paid_at = now(), payment_intent_id = $2, saved_card_id = $3, save_card = $3::text IS NOT NULL
      WHERE id = $1 AND status IN ('PENDING', 'EXPIRED') RETURNING ${ORDER_COLUMNS}`,
    [id, paymentIntentId, savedCardId],
  );
  return row;
}

/** PENDING → FAILED once, with why, keeping the refused payment (none when the buyer used up the attempts). */
export async function markFailed(tx: Transaction, id: string, paymentIntentId: string | null, failureCode: string): Promise<OrderRow | undefined> {
  const [row] = await tx.query<OrderRow>(
    `UPDATE orders SET status = 'FAILED', payment_intent_id = $2, failure_code = $3 WHERE id = $1 AND status = 'PENDING' RETURNING ${ORDER_COLUMNS}`,
    [id, paymentIntentId, failureCode],
  );
  return row;
}

export async function markCanceled(tx: Transaction, id: string): Promise<OrderRow | undefined> {
  const [row] = await tx.query<OrderRow>(`UPDATE orders SET status = 'CANCELED' WHERE id = $1 AND status = 'PENDING' RETURNING ${ORDER_COLUMNS}`, [id]);
  return row;
}

/** Brings a PENDING order's end to now (test mode's "expire" helper); the expiry itself is `markExpired`'s. */
export async function endNow(tx: Transaction, id: string): Promise<void> {
  await tx.query(`UPDATE orders SET expires_at = least(expires_at, now()) WHERE id = $1 AND status = 'PENDING'`, [id]);
}

/** PENDING past its time → EXPIRED, but never under a debit in progress. */
export async function markExpired(tx: Transaction, id: string): Promise<OrderRow | undefined> {
  const [row] = await tx.query<OrderRow>(
    `UPDATE orders SET status = 'EXPIRED'
      WHERE id = $1 AND status = 'PENDING' AND expires_at <= now()
        AND NOT EXISTS (SELECT 1 FROM payment_intents WHERE order_id = orders.id AND status = 'PROCESSING')
      RETURNING ${ORDER_COLUMNS}`,
    [id],
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
