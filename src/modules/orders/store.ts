import type { Queryable } from '../../db/db.js';
import type { Merchant } from '../../http/auth.js';
import type { ORDER_STATUSES } from './schema.js';

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
  expires_at: Date;
  created_at: Date;
}

export interface NewOrder {
  id: string;
  amount: number;
  description: string | null;
  customerRef: string | null;
  returnUrl: string | null;
  checkoutToken: string;
  ttlSeconds: number;
}

/** Inserts a PENDING order and its checkout session (same token, same expiry) in one statement. */
export async function insertOrder(tx: Queryable, merchant: Merchant, order: NewOrder): Promise<OrderRow> {
  const [row] = await tx.query<OrderRow>(
    `WITH o AS (
       INSERT INTO orders (id, product_id, livemode, amount, currency, status, description, customer_ref, return_url,
                           checkout_token, expires_at)
       VALUES ($1, $2, $3, $4, 'UZS', 'PENDING', $5, $6, $7, $8, now() + $9 * interval '1 second')
       RETURNING *),
     s AS (
       INSERT INTO checkout_sessions (token, kind, product_id, livemode, order_id, status, expires_at)
       SELECT checkout_token, 'order', product_id, livemode, id, 'PENDING', expires_at FROM o)
     SELECT * FROM o`,
    [
      order.id,
      merchant.productId,
      merchant.livemode,
      order.amount,
      order.description,
      order.customerRef,
      order.returnUrl,
      order.checkoutToken,
      order.ttlSeconds,
    ],
  );
  return row!;
}

export async function findOrder(db: Queryable, merchant: Merchant, id: string): Promise<OrderRow | undefined> {
  const [row] = await db.query<OrderRow>('SELECT * FROM orders WHERE id = $1 AND product_id = $2 AND livemode = $3', [
    id,
    merchant.productId,
    merchant.livemode,
  ]);
  return row;
}
