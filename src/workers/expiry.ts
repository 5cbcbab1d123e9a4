import type { CardBindingsService } from '../modules/card-bindings/service.js';
import type { OrdersService } from '../modules/orders/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 500;

/**
 * Expires what is past its time: card-binding sessions, and PENDING orders (with their sessions and one
 * order.expired each) unless a debit is in progress. Reads apply the same rules before this runs.
 */
export function expiry(orders: OrdersService, bindings: CardBindingsService, intervalMs: number): Worker {
  return {
    name: 'expiry',
    intervalMs,
    batchMax: BATCH_MAX,
    runOnce: async () => Math.max(await bindings.expireDue(BATCH_MAX), await orders.expireDue(BATCH_MAX)),
  };
}
