// The order's state machine: made PENDING, it ends once, paid, failed, canceled or expired.
import { StateMachine } from '../../core/state-machine.js';
import type { ORDER_STATUSES } from './schema.js';

export type OrderStatus = (typeof ORDER_STATUSES)[number];
export type OrderTrigger = 'paid' | 'failed' | 'cancel' | 'expire';

export const ORDER_STATES = new StateMachine<OrderStatus, OrderTrigger>('order', [
  // EXPIRED → PAID: the bank took the money, so the order is paid, late, rather than the money lost to it (expiry and
  // payment exclude each other; this is the answer should they ever not).
  { on: 'paid', from: ['PENDING', 'EXPIRED'], to: 'PAID' },
  { on: 'failed', from: ['PENDING'], to: 'FAILED' },
  { on: 'cancel', from: ['PENDING'], to: 'CANCELED' },
  { on: 'expire', from: ['PENDING'], to: 'EXPIRED' },
]);
