import type { PaymentsService } from '../modules/payments/service.js';
import type { PayoutsService } from '../modules/payouts/service.js';
import type { RefundsService } from '../modules/refunds/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 100;

/** Asks the rail about PROCESSING debits, PENDING refunds and IN_TRANSIT payouts whose time has come, and applies the truth once. */
export function reconciler(payments: PaymentsService, refunds: RefundsService, payouts: PayoutsService, intervalMs: number): Worker {
  return {
    name: 'reconciler',
    intervalMs,
    batchMax: BATCH_MAX,
    runOnce: async () => Math.max(await payments.reconcileDebits(BATCH_MAX), await refunds.reconcile(BATCH_MAX), await payouts.reconcile(BATCH_MAX)),
  };
}
