import type { Db } from '../../db/db.js';
import type { Merchant } from '../../http/auth.js';
import { notFound } from '../../http/errors.js';
import type { Phase } from '../../http/idempotency.js';
import { listPage, type List, type ListQuery } from '../../http/pagination.js';
import { newId, randomBase62 } from '../../lib/ids.js';
import type { CreateOrderBody, Order } from './schema.js';
import * as store from './store.js';
import type { OrderRow } from './store.js';

const CHECKOUT_TOKEN_RANDOM_CHARS = 40; // ≈ 238 bits: the token alone authorizes paying the order

export interface OrderSettings {
  checkoutUrl: string;
  orderTtlSeconds: number;
}

export function presentOrder(row: OrderRow, settings: OrderSettings): Order {
  return {
    id: row.id,
    object: 'order',
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    description: row.description,
    customerRef: row.customer_ref,
    paymentUrl: `${settings.checkoutUrl}/pay/${row.checkout_token}`,
    returnUrl: row.return_url,
    saveCard: row.save_card,
    paymentIntent: row.payment_intent_id,
    savedCard: row.saved_card_id,
    paidAt: row.paid_at?.toISOString() ?? null,
    expiresAt: row.expires_at.toISOString(),
    livemode: row.livemode,
    created: row.created_at.toISOString(),
  };
}

/** Creating an order is a single atomic phase: the order, its session and the stored response commit together. */
export function createOrderPhases(settings: OrderSettings, merchant: Merchant, body: CreateOrderBody): Record<string, Phase> {
  return {
    started: {
      atomic: async (tx) => {
        const row = await store.insertOrder(tx, merchant, {
          id: newId('ord'),
          amount: body.amount,
          description: body.description ?? null,
          customerRef: body.customerRef ?? null,
          returnUrl: body.returnUrl ?? null,
          checkoutToken: `cs_${randomBase62(CHECKOUT_TOKEN_RANDOM_CHARS)}`,
          ttlSeconds: settings.orderTtlSeconds,
        });
        return { response: { status: 201, body: presentOrder(row, settings) } };
      },
    },
  };
}

export async function getOrder(db: Db, settings: OrderSettings, merchant: Merchant, id: string): Promise<Order> {
  const row = await store.findOrder(db, merchant, id);
  if (!row) throw notFound('order');
  return presentOrder(row, settings);
}

export function listOrders(db: Db, settings: OrderSettings, merchant: Merchant, query: ListQuery): Promise<List<Order>> {
  return listPage(db, 'orders', merchant, query, (row: OrderRow) => presentOrder(row, settings));
}
