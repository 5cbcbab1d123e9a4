import type { HoldsService } from '../modules/holds/service.js';
import type { PaymentsService } from '../modules/payments/service.js';
import type { PayoutsService } from '../modules/payouts/service.js';
import type { RefundsService } from '../modules/refunds/service.js';
import type { Worker } from './loop.js';

const BATCH_MAX = 100;

/**
 * Asks the rail about PROCESSING debits, PENDING captures and releases of holds, PENDING refunds and IN_TRANSIT payouts
 * whose time has come, and applies the truth once.
 */
export function reconciler(payments: PaymentsService, holds: HoldsService, refunds: RefundsService, payouts: PayoutsService, intervalMs: number): Worker {
  return {
    name: 'reconciler',
    intervalMs,
    batchMax: BATCH_MAX,
    // Each kind on its own: one whose batch throws (its mode's bank gone) does not keep the others waiting.
    runOnce: async () => {
      const batches = await Promise.allSettled([payments.reconcileDebits(BATCH_MAX), holds.reconcile(BATCH_MAX), refunds.reconcile(BATCH_MAX), payouts.reconcile(BATCH_MAX)]);
      const failed = batches.find((batch): batch is PromiseRejectedResult => batch.status === 'rejected');
      if (failed) throw failed.reason;
      return Math.max(...batches.map((batch) => (batch as PromiseFulfilledResult<number>).value));
    },
  };
}
