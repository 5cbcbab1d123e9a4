import type { Db } from '../db/types.js';
import { expireDueSessions } from '../modules/checkout/store.js';
import type { OrdersService } from '../modules/orders/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 500;

/**
 * Expires what is past its time: card-binding sessions, and PENDING orders (with their sessions and one
 * order.expired each) unless a debit is in progress. Reads apply the same rules before this runs.
 */
export function expiry(db: Db, orders: OrdersService, intervalMs: number): Worker {
  return {
    name: 'expiry',
    intervalMs,
    batchMax: BATCH_MAX,
    runOnce: async () => Math.max(await expireDueSessions(db, BATCH_MAX), await orders.expireDue(BATCH_MAX)),
  };
}
